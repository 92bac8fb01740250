"""Would folding accents off Latin letters help other languages? An experiment, not an engine.

Both the documents and the queries are folded before ranking (a mark after an ASCII letter
is dropped: ``é`` -> ``e``, ``ş`` -> ``s``; marks on other letters stay), which is what an
analyzer step would do. Prints nDCG@10 of the engine on the text as is and folded, with the
paired p-value:

    python bench/experiments/languages/accent_fold.py \
        bench/collections/tldr-{de,es,fr,id,it,nl,pl,pt_BR,tr}
"""

from __future__ import annotations

import sys
import unicodedata
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from textchange import report

ENGINE = "bm25@5"


def fold(text: str) -> str:
    out: list[str] = []
    for ch in unicodedata.normalize("NFD", text):
        if unicodedata.combining(ch) and out and out[-1].isascii():
            continue
        out.append(ch)
    return unicodedata.normalize("NFC", "".join(out))


if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        sys.exit(0 if len(sys.argv) > 1 else 2)
    report(sys.argv[1:], [("folded", fold)], ENGINE)
