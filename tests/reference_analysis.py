"""The analysis Rookhaven did before pinning: the running interpreter's Unicode database.

Kept as a reference only: on CPython 3.11 (Unicode 14.0) the pinned 14.0 rules must give
exactly these tokens, and on a newer Python these can move where the pinned ones cannot.
"""

from __future__ import annotations

import re
import unicodedata

_TOKEN = re.compile(r"[^\W_]+")


def interpreter_split_tokens(text: str) -> list[str]:
    """NFKC, ``str.casefold`` and ``[^\\W_]+`` as this interpreter defines them."""
    return _TOKEN.findall(unicodedata.normalize("NFKC", text).casefold())
