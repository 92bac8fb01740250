"""Text analysis pinned to one Unicode version: NFKC, case folding and token runs from fixed tables.

Decision (docs/adr/0011-pinned-analysis.md): a code point unassigned in the pinned version
is kept as is, never folded, never part of a token, and bounds normalisation. NFKC of each
run of assigned characters is the interpreter's: Unicode's normalisation stability policy
makes it equal to NFKC under the pinned version whenever the interpreter's Unicode is at
least as new. Case folding and the letter/digit class have no such guarantee, so they come
from generated tables. On CPython 3.11 (Unicode 14.0) the 14.0 rules give exactly what
``rookhaven.core.analyzer.split_tokens`` gives.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from types import MappingProxyType

from ..errors import ConfigError, RookhavenError
from .chartables import unicode_14_0


@dataclass(frozen=True)
class CharTables:
    """The generated data of one Unicode version (see tools/generate_chartables.py)."""

    unicode_version: str
    assigned: tuple[tuple[int, int], ...]
    alnum: tuple[tuple[int, int], ...]
    casefold_runs: tuple[tuple[int, int, int, int], ...]
    casefold_expansions: tuple[tuple[int, str], ...]
    marks: tuple[tuple[int, int], ...]
    unsegmented: tuple[tuple[int, int], ...]
    space: tuple[tuple[int, int], ...]
    ignorable: tuple[tuple[int, int], ...]


UNICODE_VERSIONS: Mapping[str, CharTables] = MappingProxyType({
    "14.0": CharTables(unicode_14_0.UNICODE_VERSION, unicode_14_0.ASSIGNED, unicode_14_0.ALNUM,
                       unicode_14_0.CASEFOLD_RUNS, unicode_14_0.CASEFOLD_EXPANSIONS,
                       unicode_14_0.MARKS, unicode_14_0.UNSEGMENTED, unicode_14_0.SPACE,
                       unicode_14_0.IGNORABLE),
})


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


_INTERPRETER_UNICODE = unicodedata.unidata_version
if _version_key(_INTERPRETER_UNICODE) < min(map(_version_key, UNICODE_VERSIONS)):
    raise RookhavenError(
        f"this Python's Unicode database is {_INTERPRETER_UNICODE}, older than every pinned "
        f"version ({', '.join(UNICODE_VERSIONS)}); pinned NFKC needs Python 3.11 or newer")


def _char_class(ranges: tuple[tuple[int, int], ...]) -> str:
    # \U escapes keep the pattern plain ASCII, and ranges keep it free of the interpreter's
    # own character classes (\w, \d and friends follow the running Unicode database).
    return "".join(f"\\U{lo:08x}" if lo == hi else f"\\U{lo:08x}-\\U{hi:08x}"
                   for lo, hi in ranges)


def _run(ranges: tuple[tuple[int, int], ...], repeat: str = "+") -> str:
    # re tests a class's astral ranges one by one after its BMP bitmap, so every gap
    # character would pay for all of them; the lookahead lets BMP gaps fail at once.
    bmp = _char_class(tuple((lo, min(hi, 0xFFFF)) for lo, hi in ranges if lo <= 0xFFFF))
    astral = _char_class(tuple((max(lo, 0x10000), hi) for lo, hi in ranges if hi > 0xFFFF))
    return f"(?:[{bmp}]{repeat}|(?=[\\U00010000-\\U0010ffff])[{astral}]{repeat})"


def _token_pattern(ranges: tuple[tuple[int, int], ...]) -> re.Pattern[str]:
    return re.compile(_run(ranges) + "+")


def _union(*tables: tuple[tuple[int, int], ...]) -> tuple[tuple[int, int], ...]:
    """One sorted range list covering every range of ``tables`` (adjacent ones merged)."""
    merged: list[tuple[int, int]] = []
    for lo, hi in sorted(r for table in tables for r in table):
        if merged and lo <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(hi, merged[-1][1]))
        else:
            merged.append((lo, hi))
    return tuple(merged)


# The zero-width space and non-joiner part words as a space would (Thai and Khmer mark word
# breaks with the one, Persian a prefix or suffix with the other): not removed as invisible.
WORD_PARTING = ((0x200B, 0x200C),)


def _minus(ranges: tuple[tuple[int, int], ...], cut: tuple[tuple[int, int], ...]
           ) -> tuple[tuple[int, int], ...]:
    """``ranges`` without the code points of ``cut``."""
    kept: list[tuple[int, int]] = []
    for lo, hi in ranges:
        for c_lo, c_hi in cut:
            if c_lo <= hi and lo <= c_hi:  # overlap: keep what lies either side
                if lo < c_lo:
                    kept.append((lo, c_lo - 1))
                lo = c_hi + 1
        if lo <= hi:
            kept.append((lo, hi))
    return tuple(kept)


def _fold_table(tables: CharTables) -> tuple[int | str, ...]:
    # A sequence indexed by code point translates about twice as fast as a dict (a miss in
    # a dict raises KeyError inside str.translate); past its end nothing folds.
    fold: dict[int, str] = {cp: chr(cp + delta)
                            for first, last, step, delta in tables.casefold_runs
                            for cp in range(first, last + 1, step)}
    fold.update(tables.casefold_expansions)
    return tuple(fold.get(cp, cp) for cp in range(max(fold) + 1))


@dataclass(frozen=True)
class TextRules:
    """Normalisation and tokenisation of one pinned Unicode version; equal inputs, equal output
    on every Python whose Unicode is at least that version."""

    tables: CharTables
    _unassigned: re.Pattern[str] = field(init=False, repr=False, compare=False)
    _token: re.Pattern[str] = field(init=False, repr=False, compare=False)
    _fold: tuple[int | str, ...] = field(init=False, repr=False, compare=False)
    _ascii_gaps: dict[int, str] = field(init=False, repr=False, compare=False)
    # The same as a bytes table that also lowers: ASCII text's tokens in one C call each way.
    _ascii_bytes: bytes = field(init=False, repr=False, compare=False)
    # The "words" split (split_words): a word, a run of unsegmented letters inside one (with
    # the marks after it) and one such letter with its marks.
    _word: re.Pattern[str] = field(init=False, repr=False, compare=False)
    _unsegmented_run: re.Pattern[str] = field(init=False, repr=False, compare=False)
    _cluster: re.Pattern[str] = field(init=False, repr=False, compare=False)
    # The "visible-words" split (split_visible_words): the characters it removes first.
    _invisible_ranges: tuple[tuple[int, int], ...] = field(init=False, repr=False,
                                                           compare=False)
    _invisible: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        tables = self.tables
        set_ = object.__setattr__
        set_(self, "_unassigned", re.compile(f"([^{_char_class(tables.assigned)}]+)"))
        set_(self, "_token", _token_pattern(tables.alnum))
        set_(self, "_word", re.compile(
            _run(tables.alnum, "") + _run(_union(tables.alnum, tables.marks), "+") + "*"))
        cluster = _run(tables.unsegmented, "") + _run(tables.marks, "*")
        set_(self, "_unsegmented_run", re.compile(f"((?:{cluster})+)"))
        set_(self, "_cluster", re.compile(cluster))
        set_(self, "_fold", _fold_table(tables))
        set_(self, "_invisible_ranges", _minus(tables.ignorable, WORD_PARTING))
        # One plain class: with its three astral ranges it searches about twice as fast as
        # _run's form, which pays for its lookahead at every character.
        set_(self, "_invisible", re.compile(f"[{_char_class(self._invisible_ranges)}]+"))
        alnum = re.compile(f"[{_char_class(tables.alnum)}]")
        set_(self, "_ascii_gaps", {c: " " for c in range(128) if not alnum.match(chr(c))})
        set_(self, "_ascii_bytes", bytes(32 if c in self._ascii_gaps else ord(chr(c).lower())
                                         for c in range(128)) + bytes(range(128, 256)))

    @property
    def version(self) -> str:
        """The pinned Unicode version, e.g. ``"14.0.0"``."""
        return self.tables.unicode_version

    @property
    def ascii_gaps(self) -> dict[int, str]:
        """ASCII code points that are not letters or digits, each mapped to a space."""
        return self._ascii_gaps

    def normalize(self, text: str) -> str:
        """NFKC then case folding, as Unicode ``version`` defines them."""
        if text.isascii():  # NFKC is the identity on ASCII and folding is lower(), in every version
            return text.lower()
        nfkc = unicodedata.normalize
        if self._unassigned.search(text) is None:
            return nfkc("NFKC", text).translate(self._fold)
        # split() with a group: even items are runs of assigned characters, odd ones are
        # runs of unassigned code points, which are kept as they are.
        parts = self._unassigned.split(text)
        normal = "".join([p if i & 1 else nfkc("NFKC", p) for i, p in enumerate(parts)])
        return normal.translate(self._fold)

    def split_tokens(self, text: str) -> list[str]:
        """Every token of ``text`` in order: maximal runs of letters and digits after
        ``normalize``."""
        if text.isascii():  # lower() then ``_ascii_gaps``, on bytes: a third of the time
            return text.encode().translate(self._ascii_bytes).decode().split()
        return self._token.findall(self.normalize(text))

    def split_words(self, text: str) -> list[str]:
        """Every token of ``text`` in order under the "words" split (docs/adr/0039): after
        ``normalize``, a word is a letter or digit and the letters, digits and combining
        marks that follow it; within a word, each run of letters of a script written
        without spaces (CJK, Thai and its neighbours) gives each pair of adjacent letters
        (with their marks), or the letter alone if the run has one. ASCII text splits as
        ``split_tokens`` splits it."""
        if text.isascii():
            return self.split_tokens(text)
        # A dotted capital I folds to i and a combining dot: the dot says nothing an i lacks.
        normal = self.normalize(text).replace("i\u0307", "i")
        words = self._word.findall(normal)
        if self._unsegmented_run.search(normal) is None:  # unsegmented letters are in words
            return words
        found: list[str] = []
        for word in words:
            # split() with a group: even items lie between runs, odd items are runs.
            for i, part in enumerate(self._unsegmented_run.split(word)):
                if not i & 1:
                    if part:
                        found.append(part)
                    continue
                letters = self._cluster.findall(part)
                if len(letters) == 1:
                    found.append(letters[0])
                found += map(str.__add__, letters, letters[1:])
        return found

    def visible(self, text: str) -> str:
        """``text`` without the default-ignorable code points that do not part words (soft
        hyphens, joiners, bidi controls, variation selectors, tags: docs/adr/0040)."""
        return text if text.isascii() else self._invisible.sub("", text)

    def split_visible_words(self, text: str) -> list[str]:
        """Every token of ``text`` in order under the "visible-words" split (ADR 0040):
        ``split_words`` of the text without what ``visible`` removes, removed before
        normalising so that a letter and its mark compose across one."""
        return self.split_words(self.visible(text))

    def visible_map(self, text: str) -> tuple[str, list[int]]:
        """``visible(text)``, and the index in ``text`` of each of its characters."""
        kept: list[int] = []
        last = 0
        for removed in self._invisible.finditer(text):
            kept += range(last, removed.start())
            last = removed.end()
        kept += range(last, len(text))
        return "".join(text[i] for i in kept), kept

    def ignorable_chars(self) -> str:
        """Every default-ignorable code point of this version (those ``visible`` removes and
        the two that part words), as one string (for ``str.strip``)."""
        return "".join(chr(cp) for lo, hi in self.tables.ignorable for cp in range(lo, hi + 1))

    def word_parting_class(self) -> str:
        """A character class (without brackets) of the invisible characters that part words
        as white space does, which ``visible`` keeps."""
        return _char_class(WORD_PARTING)

    def word_class(self) -> str:
        """A character class (without brackets) of what re's ``\\w`` matched under this
        Unicode version: letters, digits and ``_``."""
        return _char_class(self.tables.alnum) + "_"

    def mark_class(self) -> str:
        """A character class (without brackets) of the combining marks."""
        return _char_class(self.tables.marks)

    def space_chars(self) -> str:
        """Every white-space character of this Unicode version, as one string (for
        ``str.strip``, whose own white space is the interpreter's)."""
        return "".join(chr(cp) for lo, hi in self.tables.space for cp in range(lo, hi + 1))

    def space_class(self) -> str:
        """A character class (without brackets) of what re's ``\\s`` matched under this
        Unicode version."""
        return _char_class(self.tables.space)


@cache
def text_rules(version: str) -> TextRules:
    """The text rules pinned to Unicode ``version`` (a key of ``UNICODE_VERSIONS``).

    Building them compiles two large patterns (about 40 ms), so each version is built once
    per process and shared: the rules are immutable.
    """
    tables = UNICODE_VERSIONS.get(version)
    if tables is None:
        raise ConfigError(f"unknown Unicode version {version!r} for text analysis; choose one "
                          f"of: {', '.join(UNICODE_VERSIONS)}")
    if _version_key(_INTERPRETER_UNICODE) < _version_key(tables.unicode_version):
        raise ConfigError(f"text rules for Unicode {version} need a Python whose Unicode "
                          f"database is at least {tables.unicode_version}; this one has "
                          f"{_INTERPRETER_UNICODE}")
    return TextRules(tables)
