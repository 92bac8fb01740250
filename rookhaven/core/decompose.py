"""Split a query into subqueries at connectors and punctuation, and weigh each one.

Separators (docs/adr/0003-decomposition.md):
- connector phrases, as whole words, any case: ``as well as``, ``along with``,
  ``together with``, ``in addition to``, ``and``, ``or``, ``then``, ``also``, ``plus``;
- ``;`` ``!`` ``?`` ``&`` and line breaks anywhere;
- ``,`` ``.`` ``:`` when followed by white space or the end (so ``3.5`` and ``1,000`` stay whole);
- under the "words" and "visible-words" splits (bm25@5 on), also the clause punctuation of
  other scripts (``CLAUSE_MARKS``: ideographic and full-width, Arabic, Devanagari, ...)
  anywhere.

Under "visible-words" (bm25@6) separators are found in the text the analyzer reads, without
its invisible characters (ADR 0040): a soft hyphen or a bidi mark neither hides a separator
(``faults,\u200f tide``) nor makes one (``x\u2060and`` is the word ``xand``), and the
zero-width space and non-joiner, which the analyzer keeps as word breaks, count as white
space. The parts are cut from the query as sent, and lose default-ignorable characters at
their ends as they lose white space.

"Word" and "white space" are those of the analyzer's pinned Unicode version, never the
interpreter's (ADR 0011): ASCII queries, where every version agrees, take a plain pattern.

A part's weight is its number of distinct content terms. Parts without content terms and
parts with the same set of terms as an earlier part are dropped, and the audit says so.
"""

from __future__ import annotations

import re
from functools import cache
from typing import NamedTuple

from .analyzer import DEFAULT_UNICODE, Analyzer
from .textrules import text_rules

CONNECTORS = ("as well as", "along with", "together with", "in addition to",
              "and", "or", "then", "also", "plus")
# Full stops, commas, semicolons, colons and question and exclamation marks of other
# scripts, which end a clause wherever they stand (CJK puts no space after them).
CLAUSE_MARKS = ("\u3001\u3002\uff0c\uff0e\uff1a\uff1b\uff01\uff1f\uff61\uff64"  # CJK
                "\u060c\u061b\u061f\u06d4"  # Arabic script
                "\u0964\u0965\u0589\u037e\u0f0d"  # Devanagari, Armenian, Greek, Tibetan
                "\u1362\u1363\u1364\u1367\u104a\u104b\u17d4\u17d5"  # Ethiopic, Myanmar, Khmer
                "\u203c\u2047\u2048\u2049")  # doubled question and exclamation marks


def _separator(word: str, space: str, marks: str = "") -> re.Pattern[str]:
    connector = "|".join(re.escape(c).replace(r"\ ", f"[{space}]+") for c in CONNECTORS)
    return re.compile(rf"(?<![{word}])(?i:{connector})(?![{word}])|[;!?&\n\r{marks}]"
                      rf"|[,.:](?=[{space}]|$)")


_ASCII_SEPARATOR = _separator(r"\w", r"\s")
# A query of letters, digits and spaces only has a separator only if one of its words begins
# a connector. Most queries are such and have none: this look costs a quarter of the split.
_ASCII_OTHER = re.compile(r"[^A-Za-z0-9 ]")
_CONNECTOR_STARTS = frozenset(c.split()[0] for c in CONNECTORS)


def _plain_words(query: str) -> list[str] | None:
    """The lower-cased words of a query of ASCII letters, digits and spaces none of which
    begins a connector (no separator can match it); None for any other query."""
    if not query.isascii() or _ASCII_OTHER.search(query) is not None:
        return None
    words = query.lower().split()
    return words if _CONNECTOR_STARTS.isdisjoint(words) else None


@cache
def _pinned(unicode: str, split: str) -> tuple[re.Pattern[str], str]:
    """The separator pattern and the white space a part is stripped of, of non-ASCII text."""
    rules = text_rules(unicode)
    spaces = rules.space_chars()
    word = rules.word_class() + rules.mark_class()  # "and" after a mark is inside a word
    if split == "words":
        return _separator(word, rules.space_class(), CLAUSE_MARKS), spaces
    if split == "visible-words":  # the zero-width space and non-joiner part as spaces do
        return (_separator(word, rules.space_class() + rules.word_parting_class(), CLAUSE_MARKS),
                spaces + rules.ignorable_chars())
    return _separator(rules.word_class(), rules.space_class()), spaces


def _cut_visible(query: str, separator: re.Pattern[str], unicode: str) -> list[str]:
    """The pieces of ``query`` between the separators of its visible text, cut from the
    query as sent (the invisible characters stay in them)."""
    rules = text_rules(unicode)
    if rules.visible(query) == query:  # the usual case: one search, no index map
        return separator.split(query)
    visible, where = rules.visible_map(query)
    pieces: list[str] = []
    start = 0
    for found in separator.finditer(visible):
        pieces.append(query[start:where[found.start()]])
        start = where[found.end() - 1] + 1
    pieces.append(query[start:])
    return pieces


def _stripped(text: str, unicode: str) -> str:
    """``text`` without white space at either end (the pinned version's, if not ASCII)."""
    return text.strip() if text.isascii() else text.strip(_pinned(unicode, "alnum-runs")[1])


class Part(NamedTuple):
    """A candidate subquery: its text, its content terms (repeats kept) and the distinct ones.

    Named tuples, as ``Decomposition`` is: made for every request, where a frozen dataclass's
    guarded fields cost a microsecond a part."""

    text: str
    terms: tuple[str, ...]
    distinct: tuple[str, ...]

    @property
    def weight(self) -> int:
        return len(self.distinct)


class Decomposition(NamedTuple):
    """The subqueries a query became, and the parts that were dropped with the reason."""

    parts: tuple[Part, ...]
    dropped: tuple[tuple[str, str], ...]


def split_parts(query: str, unicode: str = DEFAULT_UNICODE, split: str = "alnum-runs"
                ) -> list[str]:
    """The non-blank pieces of ``query`` between separators, stripped, in order, for an
    analyzer of Unicode version ``unicode`` and split ``split``."""
    if query.isascii():  # str.strip() and \s agree on ASCII in every Unicode version
        spaces = None
        pieces = [query] if _plain_words(query) is not None else _ASCII_SEPARATOR.split(query)
    else:
        separator, spaces = _pinned(unicode, split)
        pieces = (_cut_visible(query, separator, unicode) if split == "visible-words"
                  else separator.split(query))
    return [part for piece in pieces if (part := piece.strip(spaces))]


def _part(text: str, analyzer: Analyzer) -> Part:
    terms = tuple(analyzer.terms(text))
    return Part(text, terms, tuple(dict.fromkeys(terms)))


def decompose(query: str, analyzer: Analyzer, *, split: bool = True) -> Decomposition:
    """Subqueries of ``query``; with ``split=False`` the whole query is the only candidate."""
    # Letters, digits and spaces, no connector: one part, whose words are the analyzer's
    # tokens (no other gap, no identifier to cut): tokenised once, for both questions.
    words = _plain_words(query) if split and analyzer.identifiers == "none" else None
    if words:
        terms = tuple(analyzer.terms_of(words))
        if terms:
            return Decomposition((Part(query.strip(), terms, tuple(dict.fromkeys(terms))),), ())
    return decompose_each(query, analyzer, split=split)


def decompose_each(query: str, analyzer: Analyzer, *, split: bool = True) -> Decomposition:
    """``decompose`` by the separators and the analyzer alone, each part on its own: the
    reference its quick path for plain ASCII queries is held to."""
    texts = (split_parts(query, analyzer.unicode, analyzer.split) if split
             else [_stripped(query, analyzer.unicode)])
    if len(texts) == 1:  # the usual query: no earlier part to repeat
        part = _part(texts[0], analyzer)
        if part.distinct:
            return Decomposition((part,), ())
        return Decomposition((), ((texts[0], "no content terms"),))
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
    return Decomposition(tuple(parts), tuple(dropped))
