"""bm25@3 with its expansion terms chosen among the terms the query lacks, against bm25@3.

An experiment for issue 28 target 2, not an engine: reusing the first pass's sums needs
the second pass to weigh the query terms in proportion to the first, which holds when no
query term is also an expansion term. This patches ``Bm25PrfIndex._compute`` in-process
(Bo1 chooses ``fb_terms`` plus as many as the query has, the query's own are dropped, the
best ``fb_terms`` kept) and prints nDCG@10 of both over each collection given:

    python bench/experiments/issue28/expansion_only.py ../shared/datasets/* \\
        bench/collections/{adi,lisa,med,time,tldr,metatool,servicenow,gorilla-torchhub,cranfield-titles}
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))

from rookhaven import Retriever  # noqa: E402
from rookhaven.core.providers.bm25prf import Bm25PrfIndex, Feedback  # noqa: E402
from rookhaven.evaluation.beir import load_collection  # noqa: E402
from rookhaven.evaluation.run import run_collection  # noqa: E402

STANDARD = Bm25PrfIndex._compute


def expansion_only(self: Bm25PrfIndex, terms: tuple[str, ...]) -> Feedback:
    base = self.base_plan(terms)
    if self.forward is None or not base:
        return Feedback(docs=(), plan=base, terms=())
    docs, scores = self.first_pass(base)
    ids = self.index.term_ids
    query = {ids[t] for t in terms if t in ids}
    wanted = self.fb_terms
    self.fb_terms = wanted + len(query)
    try:
        chosen = self.chosen(docs, scores)
    finally:
        self.fb_terms = wanted
    kept = sorted(((w, t) for t, w in chosen.items() if t not in query),
                  key=lambda pair: (-pair[0], pair[1]))[:wanted]
    return self.weighted(terms, base, docs, {t: w for w, t in kept})


def main() -> None:
    for directory in map(Path, sys.argv[1:]):
        collection = load_collection(directory, max_docs=10**6)
        found = []
        for compute in (STANDARD, expansion_only):
            Bm25PrfIndex._compute = compute  # type: ignore[method-assign]
            retriever = Retriever(collection.documents, "bm25@3")
            found.append(run_collection(collection, retriever, budget=10,
                                        seed="eval").metrics["ndcg@10"])
        Bm25PrfIndex._compute = STANDARD  # type: ignore[method-assign]
        print(f"{directory.name:<18} bm25@3 {found[0]:.4f}  expansion-only {found[1]:.4f}  "
              f"{found[1] - found[0]:+.4f}", flush=True)


if __name__ == "__main__":
    main()
