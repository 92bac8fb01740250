"""Split a query into subqueries at connectors and punctuation, and weigh each one.

Separators (docs/adr/0003-decomposition.md):
- connector phrases, as whole words, any case: ``as well as``, ``along with``,
  ``together with``, ``in addition to``, ``and``, ``or``, ``then``, ``also``, ``plus``;
- ``;`` ``!`` ``?`` ``&`` and line breaks anywhere;
- ``,`` ``.`` ``:`` when followed by white space or the end (so ``3.5`` and ``1,000`` stay whole).

A part's weight is its number of distinct content terms. Parts without content terms and
parts with the same set of terms as an earlier part are dropped, and the audit says so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .analyzer import Analyzer

CONNECTORS = ("as well as", "along with", "together with", "in addition to",
              "and", "or", "then", "also", "plus")

_CONNECTOR = "|".join(re.escape(c).replace(r"\ ", r"\s+") for c in CONNECTORS)
_SEPARATOR = re.compile(
    rf"(?<!\w)(?:{_CONNECTOR})(?!\w)|[;!?&\n\r]|[,.:](?=\s|$)", re.IGNORECASE
)


@dataclass(frozen=True)
class Part:
    """A candidate subquery: its text, its content terms (repeats kept) and the distinct ones."""

    text: str
    terms: tuple[str, ...]
    distinct: tuple[str, ...]

    @property
    def weight(self) -> int:
        return len(self.distinct)


@dataclass(frozen=True)
class Decomposition:
    """The subqueries a query became, and the parts that were dropped with the reason."""

    parts: tuple[Part, ...]
    dropped: tuple[tuple[str, str], ...]


def split_parts(query: str) -> list[str]:
    """The non-blank pieces of ``query`` between separators, stripped, in order."""
    return [piece.strip() for piece in _SEPARATOR.split(query) if piece.strip()]


def _part(text: str, analyzer: Analyzer) -> Part:
    terms = tuple(analyzer.terms(text))
    return Part(text=text, terms=terms, distinct=tuple(dict.fromkeys(terms)))


def decompose(query: str, analyzer: Analyzer, *, split: bool = True) -> Decomposition:
    """Subqueries of ``query``; with ``split=False`` the whole query is the only candidate."""
    texts = split_parts(query) if split else [query.strip()]
    parts: list[Part] = []
    dropped: list[tuple[str, str]] = []
    seen: dict[tuple[str, ...], int] = {}
    for text in texts:
        part = _part(text, analyzer)
        key = tuple(sorted(part.distinct))
        if not part.distinct:
            dropped.append((text, "no content terms"))
        elif key in seen:
            dropped.append((text, f"same terms as subquery {seen[key]}"))
        else:
            seen[key] = len(parts)
            parts.append(part)
    return Decomposition(parts=tuple(parts), dropped=tuple(dropped))
