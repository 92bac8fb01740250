"""How much block-max skipping could save at most: postings in ranges no top-k document is in.

Run by hand (not a test):

    python bench/blockmax_bound.py bench/data/syn100k --engine bm25@2 --queries 150

For each query (the first ``--queries`` of q3.jsonl and q8.jsonl), k = 10 and 100, and
ranges of 128, 512 and 4,096 documents: the query's exact scores give the final k-th best
score; a range whose summed per-term maxima (each query term's best value in that range,
times its count) stay below it cannot hold a top-k document, so a block-max index with
that oracle cut could skip its postings. The share of postings in the other ranges is an
upper bound on what block maxima leave to read: real pruning knows the cut only as it
rises, and blocks follow postings, not document ranges.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import orjson  # noqa: E402

from bench.kernel_view import kernel_view  # noqa: E402
from rookhaven import Retriever  # noqa: E402
from rookhaven.corpusfile import load_corpus  # noqa: E402

RANGES = (128, 512, 4096)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--engine", default="bm25@2")
    parser.add_argument("--queries", type=int, default=150)
    args = parser.parse_args()
    retriever = Retriever(load_corpus(args.corpus / "corpus.jsonl", max_docs=10**8),
                          args.engine)
    scorer, plan_of = kernel_view(retriever)
    n_docs = scorer.n_docs
    for name in ("q3", "q8"):
        lines = (args.corpus / f"{name}.jsonl").read_bytes().splitlines()[: args.queries]
        plans = [plan_of(orjson.loads(line)["text"]) for line in lines]
        for k in (10, 100):
            for size in RANGES:
                ranges = (n_docs + size - 1) // size
                total = kept = 0
                for plan in plans:
                    _, units = scorer.score_all(plan)
                    if len(units) <= k:
                        continue
                    cut = np.partition(units, len(units) - k)[len(units) - k]
                    bound = np.zeros(ranges, dtype=np.int64)
                    postings = np.zeros(ranges, dtype=np.int64)
                    for qtf, expansion in plan:
                        docs, values = scorer.group(expansion)
                        best = np.zeros(ranges, dtype=np.int64)
                        np.maximum.at(best, docs // size, values)
                        bound += qtf * best  # coverage only lowers a score
                        postings += np.bincount(docs // size, minlength=ranges)
                    total += int(postings.sum())
                    kept += int(postings[bound >= cut].sum())
                print(f"{name} k={k} ranges of {size}: {100 * kept / max(total, 1):.1f}% of "
                      "the postings are in ranges that may hold a top-k document", flush=True)


if __name__ == "__main__":
    main()
