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

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import ranking  # noqa: E402

from rookhaven.evaluation import load_collection  # noqa: E402
from rookhaven.evaluation.metrics import ndcg  # noqa: E402
from rookhaven.evaluation.significance import paired_p  # noqa: E402

ENGINE = "bm25@5"


def fold(text: str) -> str:
    out: list[str] = []
    for ch in unicodedata.normalize("NFD", text):
        if unicodedata.combining(ch) and out and out[-1].isascii():
            continue
        out.append(ch)
    return unicodedata.normalize("NFC", "".join(out))


def main(paths: list[str]) -> None:
    for path in map(Path, paths):
        collection = load_collection(path, max_docs=10**7)
        folded = [d.model_copy(update={"text": fold(d.text),
                                       "fields": {k: fold(v) for k, v in d.fields.items()}})
                  for d in collection.documents]
        as_is = ranking.build_rookhaven(collection.documents, engine=ENGINE)
        folding = ranking.build_rookhaven(folded, engine=ENGINE)
        queries = sorted(collection.queries)
        a = [ndcg(as_is(collection.queries[q], 100), collection.qrels.get(q, {}), 10)
             for q in queries]
        b = [ndcg(folding(fold(collection.queries[q]), 100), collection.qrels.get(q, {}), 10)
             for q in queries]
        p = 1.0 if a == b else paired_p(a, b)
        print(f"{path.name}: {sum(a) / len(a):.4f} as is, {sum(b) / len(b):.4f} folded (p {p:.2g})")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
