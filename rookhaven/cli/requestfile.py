"""Reading a JSON Lines file of retrieval requests (``submit --requests``), every line checked.

One request per line: ``query``, and optionally ``recallBudget``, ``seed``, ``decompose``,
``engine``; blank lines are skipped. A bad line is an InputError ``FILE: line N: ...``.
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from ..config import Settings
from ..core.engines import engine_spec
from ..errors import InputError, shown
from ..jsonkeys import repeated_key
from ..models import RetrievalRequest

# Field -> (type it must have, what to call it in a message).
FIELDS: dict[str, tuple[type, str]] = {
    "query": (str, "a string"),
    "recallBudget": (int, "a whole number"),
    "seed": (str, "a string"),
    "decompose": (bool, "true or false"),
    "engine": (str, "a string NAME@VERSION"),
}


@dataclass(frozen=True)
class Defaults:
    """What a line that leaves a field out gets (the command's flags, else the settings)."""

    recall_budget: int | None
    seed: str | None
    decompose: bool
    engine: str


def read_requests(path: Path, settings: Settings,
                  defaults: Defaults) -> list[tuple[RetrievalRequest, str]]:
    """Every request in ``path`` with its engine (``name@version``), in file order."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(f"{path}: cannot read it: {exc.strerror or exc}") from None
    data = data.removeprefix(codecs.BOM_UTF8)  # a byte order mark some editors write
    found = [_line(raw, settings, defaults, f"{path}: line {number}")
             for number, raw in enumerate(data.split(b"\n"), start=1) if raw.strip()]
    if not found:
        raise InputError(f"{path}: no requests in it (one JSON object per line)")
    return found


def _line(raw: bytes, settings: Settings, defaults: Defaults,
          where: str) -> tuple[RetrievalRequest, str]:
    try:
        item: Any = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError as bad:  # orjson's own words for it name surrogates
            raise InputError(f"{where}: not UTF-8 (byte {bad.start + 1} of the line); save "
                             "the file as UTF-8") from None
        raise InputError(f"{where}: not JSON ({exc})") from None
    if not isinstance(item, dict):
        raise InputError(f"{where}: expected a JSON object, got {type(item).__name__}")
    repeated = repeated_key(raw, item)
    if repeated is not None:
        raise InputError(f"{where}: the field {shown(repeated)} is given twice; keep one")
    unknown = sorted(set(item) - set(FIELDS))
    if unknown:
        raise InputError(f"{where}: unknown field {shown(unknown[0])}; "
                         f"known fields: {', '.join(FIELDS)}")
    if "query" not in item:
        raise InputError(f"{where}: no query (a line needs at least {{\"query\": ...}})")
    for name, value in item.items():
        kind, what = FIELDS[name]
        if kind is int and isinstance(value, float) and value.is_integer():
            # JSON Schema's integer, as the MCP tools read it: 3.0 is 3.
            value = item[name] = int(value)
        # bool is an int in Python; a budget of `true` is a mistake, not 1.
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise InputError(f"{where}: {name} must be {what}, "
                             f"got {shown(orjson.dumps(value).decode())}")
    try:
        request = settings.request(
            item["query"],
            item.get("recallBudget", defaults.recall_budget),
            item.get("seed", defaults.seed),
            item.get("decompose", defaults.decompose),
        )
        engine = engine_spec(item.get("engine", defaults.engine)).ref
    except InputError as exc:
        raise InputError(f"{where}: {exc}") from None
    return request, engine
