"""Objects with a key given twice in JSON a user wrote: refused, as orjson would keep the last.

RFC 8259 leaves a repeated name's meaning to the parser (orjson keeps the last value, other
parsers the first), so a corpus line or a request holding one means different things to
different readers: input an audit trail must not take. Checking every line with Python's
parser would double the cost of reading a corpus, so a quick test comes first: orjson writes
every string of what it parsed with its quotes, and a quote written in the input as
``\\u0022`` comes back as ``\\"``, so re-encoding the parsed value never has fewer quote
characters than the input unless a repeated key (and its value) was dropped.
"""

from __future__ import annotations

import json
from typing import Any

import orjson

_ESCAPED_QUOTE = b"\\u0022"  # JSON's only other way to write a quote (\u, four digits)


class _Repeated(Exception):
    def __init__(self, key: str) -> None:
        self.key = key


def _refuse_repeats(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise _Repeated(key)
        seen[key] = value
    return seen


def repeated_key(raw: bytes, parsed: Any) -> str | None:
    """A key some object of ``raw`` (JSON that orjson parsed as ``parsed``) gives twice,
    or None when no object repeats a key."""
    try:
        quotes = orjson.dumps(parsed).count(b'"')
    except orjson.JSONEncodeError:  # nested past orjson's writer: ask Python's parser
        quotes = -1
    if raw.count(b'"') <= quotes and _ESCAPED_QUOTE not in raw:
        return None
    try:
        json.loads(raw.removeprefix(b"\xef\xbb\xbf"), object_pairs_hook=_refuse_repeats)
    except _Repeated as found:
        return found.key
    except (ValueError, RecursionError):  # what orjson read and Python's parser cannot
        return None
    return None
