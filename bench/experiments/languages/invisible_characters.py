"""What removing Unicode's default-ignorable code points would do: an experiment, not an engine.

Text is a soft hyphen, a word joiner or a variation selector away from other terms today
(docs/adr/0040-invisible-characters.md). This removes every Default_Ignorable_Code_Point of
Unicode 14.0 (``drop``, as NFKC_Casefold does) or turns each into a space (``space``, which
ranks exactly as bm25@5 does now: the split already cuts there) from documents and queries
alike, and prints bm25@5's nDCG@10 on the text as is and changed, with the paired p-value:

    python bench/experiments/languages/invisible_characters.py drop bench/collections/tldr-{fa,bn}

``hyphenate`` measures what soft hyphens cost today: a soft hyphen after every fifth letter
of each document word longer than ten (as HTML hyphenated with ``&shy;`` carries them),
bm25@5 on those documents against bm25@5 on the documents as they were (which is what
dropping the ignorables would give back). ``--engine bm25@6`` (any engine; default bm25@5)
ranks with that engine instead: bm25@6 removes them itself (ADR 0040), so with and without
must be equal there:

    python bench/experiments/languages/invisible_characters.py hyphenate --engine bm25@6 \
        bench/collections/tldr-de
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from textchange import compare, report

# DerivedCoreProperties.txt 14.0, Default_Ignorable_Code_Point (unassigned ones included).
IGNORABLE = ((0x00AD, 0x00AD), (0x034F, 0x034F), (0x061C, 0x061C), (0x115F, 0x1160),
             (0x17B4, 0x17B5), (0x180B, 0x180F), (0x200B, 0x200F), (0x202A, 0x202E),
             (0x2060, 0x206F), (0x3164, 0x3164), (0xFE00, 0xFE0F), (0xFEFF, 0xFEFF),
             (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8), (0x1BCA0, 0x1BCA3), (0x1D173, 0x1D17A),
             (0xE0000, 0xE0FFF))
PATTERN = re.compile("[" + "".join(f"\\U{lo:08x}-\\U{hi:08x}" for lo, hi in IGNORABLE) + "]")
LONG_WORD = re.compile(r"\w{11,}")


def hyphenated(text: str) -> str:
    return LONG_WORD.sub(lambda m: "\u00ad".join(m.group(0)[i:i + 5]
                                                 for i in range(0, len(m.group(0)), 5)), text)


def main(mode: str, paths: list[str], engine: str) -> None:
    if mode != "hyphenate":
        def removed(text: str) -> str:
            return PATTERN.sub(" " if mode == "space" else "", text)

        report(paths, [(f"with ignorables {mode}", removed)], engine)
        return
    for path in map(Path, paths):  # queries are typed: only the documents carry soft hyphens
        without, hyphens, p = compare(path, hyphenated, lambda q: q, engine)
        print(f"{path.name} ({engine}): {hyphens:.4f} with soft hyphens, {without:.4f} without "
              f"(p {p:.2g})")


if __name__ == "__main__":
    if len(sys.argv) < 3 or sys.argv[1] not in ("drop", "space", "hyphenate"):
        sys.exit(__doc__)
    args = sys.argv[2:]
    chosen = "bm25@5"
    if args[:1] == ["--engine"] and len(args) > 2:
        chosen, args = args[1], args[2:]
    main(sys.argv[1], args, chosen)
