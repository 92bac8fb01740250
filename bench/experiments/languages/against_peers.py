"""Per-query nDCG@10 of one Rookhaven engine against the peers, with paired p-values.

Where ``bench/ranking.py quality`` shows a peer ahead by a few thousandths, this says
whether the gap is more than the queries' spread (paired t-test over the same queries):

    python bench/experiments/languages/against_peers.py bm25@5 bench/collections/tldr-{es,id,nl}
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import ranking  # noqa: E402
from peers import build_bm25s, build_tantivy  # noqa: E402

from rookhaven.evaluation import load_collection  # noqa: E402
from rookhaven.evaluation.metrics import ndcg  # noqa: E402
from rookhaven.evaluation.significance import paired_p  # noqa: E402


def main(engine: str, paths: list[str]) -> None:
    for path in map(Path, paths):
        collection = load_collection(path, max_docs=10**7)
        ids = [d.id for d in collection.documents]
        texts = [" ".join([*(d.fields[f] for f in sorted(d.fields)), d.text])
                 for d in collection.documents]
        systems = {
            engine: ranking.build_rookhaven(collection.documents, engine=engine),
            "bm25s": build_bm25s(ids, texts, stem=True),
            "tantivy": build_tantivy(ids, texts),
            "rank_bm25": ranking.build_rank_bm25(ids, texts),
        }
        queries = sorted(collection.queries)
        per = {name: [ndcg(search(collection.queries[q], 100), collection.qrels.get(q, {}), 10)
                      for q in queries] for name, search in systems.items()}
        ours = per[engine]
        cells = [f"{name} {sum(v) / len(v):.4f}" + ("" if name == engine else
                                                    f" (p {paired_p(ours, v):.2g})")
                 for name, v in per.items()]
        print(f"{path.name} ({len(queries)} queries): " + ", ".join(cells))


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2:])
