"""Would Arabic-script normalisation help? An experiment, not an engine.

What Lucene's Arabic and Persian normalisers do, on documents and queries alike: ``strip``
removes the short-vowel marks (tashkeel, U+064B-U+065F), the superscript alef and the tatweel
(U+0640); ``full`` also folds the alef forms to a bare alef, alef maksura and Arabic yeh to
Persian yeh, teh marbuta to heh and Arabic kaf to keheh. Prints nDCG@10 of the engine on the
text as is and changed, with the paired p-value:

    python bench/experiments/languages/arabic_normalise.py bench/collections/tldr-{ar,fa}
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from textchange import report

ENGINE = "bm25@6"
MARKS = re.compile("[\u064b-\u065f\u0670\u0640]")
FOLDS = str.maketrans({"\u0623": "\u0627", "\u0625": "\u0627", "\u0622": "\u0627",
                       "\u0671": "\u0627", "\u0649": "\u06cc", "\u064a": "\u06cc",
                       "\u0629": "\u0647", "\u0643": "\u06a9"})


def strip(text: str) -> str:
    return MARKS.sub("", text)


def full(text: str) -> str:
    return strip(text).translate(FOLDS)


if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        sys.exit(0 if len(sys.argv) > 1 else 2)
    report(sys.argv[1:], [("with strip", strip), ("with full", full)], ENGINE)
