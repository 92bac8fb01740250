"""Writes the character tables of pinned text analysis for the running interpreter's Unicode.

Run it under a CPython whose ``unicodedata.unidata_version`` is the version to pin, e.g. for
Unicode 14.0 (CPython 3.11)::

    ~/.pyenv/versions/3.11.7/bin/python3.11 tools/generate_chartables.py --version 14.0

It writes ``rookhaven/core/chartables/unicode_14_0.py`` (``--stdout`` prints it instead).
The output depends only on the interpreter's Unicode database, so any CPython with the same
``unidata_version`` writes the same bytes; tests/unit/test_chartables.py checks that.
"""

from __future__ import annotations

import argparse
import sys
import unicodedata
from collections.abc import Callable, Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT_DIR = ROOT / "rookhaven" / "core" / "chartables"
LAST = 0x10FFFF
WIDTH = 99  # the project's line limit is 100


def ranges(keep: Callable[[int], bool]) -> list[tuple[int, int]]:
    """Inclusive ``(first, last)`` runs of the code points for which ``keep`` holds."""
    found: list[tuple[int, int]] = []
    start = None
    for cp in range(LAST + 2):
        inside = cp <= LAST and keep(cp)
        if inside and start is None:
            start = cp
        elif not inside and start is not None:
            found.append((start, cp - 1))
            start = None
    return found


def casefold_tables() -> tuple[list[tuple[int, int, int, int]], list[tuple[int, str]]]:
    """Case folding where it changes a character, as arithmetic runs plus expansions.

    A run ``(first, last, step, delta)`` folds every ``cp in range(first, last + 1, step)``
    to ``chr(cp + delta)``; an expansion folds one code point to a longer string.
    """
    singles: list[tuple[int, int]] = []
    expansions: list[tuple[int, str]] = []
    for cp in range(LAST + 1):
        folded = chr(cp).casefold()
        if folded == chr(cp):
            continue
        if len(folded) == 1:
            singles.append((cp, ord(folded) - cp))
        else:
            expansions.append((cp, folded))
    runs: list[tuple[int, int, int, int]] = []
    i = 0
    while i < len(singles):
        first, delta = singles[i]
        last, step, j = first, 1, i + 1
        if j < len(singles) and singles[j][1] == delta:
            step = singles[j][0] - first
            while j < len(singles) and singles[j] == (last + step, delta):
                last = singles[j][0]
                j += 1
        runs.append((first, last, step, delta))
        i = j
    return runs, expansions


# Scripts written without spaces between words (CJK, and the South-East Asian scripts of
# Unicode's line-breaking class SA), by the character name prefixes Unicode 14 gives them:
# Python's unicodedata has no Script property. Digits are not among them.
UNSEGMENTED_NAMES = (
    "CJK UNIFIED IDEOGRAPH", "CJK COMPATIBILITY IDEOGRAPH", "IDEOGRAPHIC ITERATION MARK",
    "VERTICAL IDEOGRAPHIC ITERATION MARK", "IDEOGRAPHIC NUMBER ZERO", "HANGZHOU NUMERAL",
    "HIRAGANA", "KATAKANA", "HALFWIDTH KATAKANA", "HANGUL", "HALFWIDTH HANGUL",
    "THAI", "LAO", "KHMER", "MYANMAR", "TAI THAM", "TAI VIET", "TAI LE", "NEW TAI LUE",
)


def unsegmented(cp: int) -> bool:
    """A letter of a script written without spaces between words."""
    ch = chr(cp)
    return (ch.isalnum() and unicodedata.category(ch) != "Nd"
            and unicodedata.name(ch, "").startswith(UNSEGMENTED_NAMES))


# Default_Ignorable_Code_Point, from DerivedCoreProperties.txt of each version (unassigned
# code points included: Unicode reserves them as ignorable). unicodedata has no such
# property, so the list is data here, checked against the general categories by
# ``ignorable``.
DEFAULT_IGNORABLE = {
    "14.0": ((0x00AD, 0x00AD), (0x034F, 0x034F), (0x061C, 0x061C), (0x115F, 0x1160),
             (0x17B4, 0x17B5), (0x180B, 0x180F), (0x200B, 0x200F), (0x202A, 0x202E),
             (0x2060, 0x206F), (0x3164, 0x3164), (0xFE00, 0xFE0F), (0xFEFF, 0xFEFF),
             (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8), (0x1BCA0, 0x1BCA3), (0x1D173, 0x1D17A),
             (0xE0000, 0xE0FFF)),
}
# The format characters (Cf) that are shown, and so not ignorable: the prepended
# concatenation marks (Arabic number signs, Syriac and Kaithi abbreviation marks), the
# interlinear annotation characters and the Egyptian hieroglyph format controls.
VISIBLE_FORMAT = ((0x0600, 0x0605), (0x06DD, 0x06DD), (0x070F, 0x070F), (0x0890, 0x0891),
                  (0x08E2, 0x08E2), (0xFFF9, 0xFFFB), (0x110BD, 0x110BD), (0x110CD, 0x110CD),
                  (0x13430, 0x13438))


def ignorable(version: str) -> Callable[[int], bool]:
    """Membership in ``version``'s default-ignorable list, after checking the list against
    the interpreter's categories: every listed code point is a format character, a
    nonspacing mark, a Hangul filler or unassigned, and every other format character is
    one of VISIBLE_FORMAT (so a list copied wrong, or one missing a new Cf, is refused)."""
    listed = frozenset(cp for lo, hi in DEFAULT_IGNORABLE[version] for cp in range(lo, hi + 1))
    shown = frozenset(cp for lo, hi in VISIBLE_FORMAT for cp in range(lo, hi + 1))
    for cp in range(LAST + 1):
        category = unicodedata.category(chr(cp))
        if cp in listed:
            if category not in ("Cf", "Mn", "Cn") and "FILLER" not in unicodedata.name(chr(cp)):
                raise SystemExit(f"U+{cp:04X} ({category}) is listed as default-ignorable")
        elif category == "Cf" and cp not in shown:
            raise SystemExit(f"U+{cp:04X} is a format character missing from the "
                             f"default-ignorable list of {version}")
    return listed.__contains__


def _escape(text: str) -> str:
    out = []
    for ch in text:
        cp = ord(ch)
        if 0x20 <= cp < 0x7F and ch not in "\"\\":
            out.append(ch)
        elif cp <= 0xFFFF:
            out.append(f"\\u{cp:04x}")
        else:
            out.append(f"\\U{cp:08x}")
    return '"' + "".join(out) + '"'


def _block(name: str, kind: str, comment: str, items: Iterable[str]) -> list[str]:
    rows = list(items)
    lines = [f"# {comment}", f"{name}: {kind} = ("]
    line = ""
    for row in rows:
        if line and len(line) + len(row) + 2 > WIDTH:
            lines.append(line)
            line = ""
        line = f"{line} {row}," if line else f"    {row},"
    if line:
        lines.append(line)
    lines.append(")")
    return lines


def render(version: str) -> str:
    """The table module's source for Unicode ``version`` (the running interpreter's)."""
    def hx(cp: int) -> str:
        return f"0x{cp:04X}"

    # (name, comment, which code points): the tables of inclusive code point ranges.
    range_tables = (
        ("ASSIGNED", "Code points whose general category is not Cn (surrogates and private "
         "use count).", lambda cp: unicodedata.category(chr(cp)) != "Cn"),
        ("ALNUM", "Code points with str.isalnum(): what [^\\W_] matches in a str pattern of re.",
         lambda cp: chr(cp).isalnum()),
        ("MARKS", "Combining marks (general category Mn, Mc or Me): inside a word, never one.",
         lambda cp: unicodedata.category(chr(cp)) in ("Mn", "Mc", "Me")),
        ("UNSEGMENTED", "Letters of scripts written without spaces between words "
         "(UNSEGMENTED_NAMES).", unsegmented),
        ("SPACE", "Code points with str.isspace(): what \\s matches in a str pattern of re.",
         lambda cp: chr(cp).isspace()),
        ("IGNORABLE", "Default_Ignorable_Code_Point (DerivedCoreProperties.txt; unassigned "
         "ones included).", ignorable(version)),
    )
    runs, expansions = casefold_tables()
    lines = [
        f'"""Unicode {version} character tables for pinned text analysis '
        '(generated: do not edit)."""',
        "",
        f"# Generated by tools/generate_chartables.py --version {version}, under a CPython whose",
        f"# unicodedata.unidata_version is {unicodedata.unidata_version}. "
        "Code point ranges are inclusive.",
        "",
        f'UNICODE_VERSION = "{unicodedata.unidata_version}"',
        "",
    ]
    for name, comment, keep in range_tables:
        lines += [*_block(name, "tuple[tuple[int, int], ...]", comment,
                          (f"({hx(a)}, {hx(b)})" for a, b in ranges(keep))), ""]
    lines += [
        *_block("CASEFOLD_RUNS", "tuple[tuple[int, int, int, int], ...]",
                "(first, last, step, delta): cp in range(first, last + 1, step) folds to "
                "chr(cp + delta).",
                (f"({hx(a)}, {hx(b)}, {s}, {d})" for a, b, s, d in runs)),
        "",
        *_block("CASEFOLD_EXPANSIONS", "tuple[tuple[int, str], ...]",
                "Code points that fold to more than one character.",
                (f"({hx(cp)}, {_escape(s)})" for cp, s in expansions)),
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--version", required=True, help="Unicode version to pin, e.g. 14.0")
    parser.add_argument("--stdout", action="store_true", help="print instead of writing")
    args = parser.parse_args(argv)
    have = ".".join(unicodedata.unidata_version.split(".")[:2])
    if have != args.version:
        parser.error(f"this interpreter ({sys.version.split()[0]}) has Unicode "
                     f"{unicodedata.unidata_version}; run the generator under one with "
                     f"Unicode {args.version} (14.0 is CPython 3.11, 15.0 3.12, 15.1 3.13)")
    if args.version not in DEFAULT_IGNORABLE:
        parser.error(f"no default-ignorable list for Unicode {args.version} yet: add the "
                     f"ranges of its DerivedCoreProperties.txt to DEFAULT_IGNORABLE")
    source = render(args.version)
    if args.stdout:
        sys.stdout.write(source)
    else:
        path = OUT_DIR / f"unicode_{args.version.replace('.', '_')}.py"
        path.write_text(source, encoding="utf-8", newline="\n")
        print(f"wrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
