"""What an exact one-pass ranking of an engine's postings costs at least, against bm25s.

Run by hand (not a test):

    python bench/postings_floor.py bench/data/syn100k --engine bm25@2

For each query file of the directory (q3.jsonl, q8.jsonl), in one process:
- **postings**: how many postings the engine's plans read per query (every list of a
  query term: itself, its prefix extensions, its synonyms, as the kernel's list table
  holds them), and how many bm25s reads for the same query (its own tokenizer, English stop
  words, no stemming: the `bm25s-numba` peer of `bench/ranking.py speed`);
- **floor**: a compiled loop that only adds each posting's impact into a dense array of
  all documents and clears it again, the least an exact exhaustive pass does (no matched
  count, no coverage, no top-k): a lower bound on a kernel that reads every posting;
- **kernel**: the engine's top-k scoring of the same plans (`Bm25Scorer.score_top`) at
  k = 10 and 100;
- **bm25s-numba**: its whole request (tokenize, score, top-k), through the same search
  `bench/ranking.py speed` times (`peers.bm25s_search`).

Times are the fastest of ``--passes`` passes, each query once per pass in sequence.
The point is the ratio of work, not of speed: when the floor over the engine's postings
exceeds the peer's whole request, no design that reads those postings can match it, and
only skipping postings would (how many could be skipped was measured by
``bench/blockmax_bound.py``, removed since; it is in git at commit 91e50cf).
"""

from __future__ import annotations

import argparse
import functools
import math
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import orjson  # noqa: E402
from numba import njit  # noqa: E402

from bench.kernel_view import kernel_view  # noqa: E402
from bench.peers import Search, bm25s_model, bm25s_search  # noqa: E402
from rookhaven import Retriever  # noqa: E402
from rookhaven.corpusfile import load_corpus  # noqa: E402


@njit(cache=False, nogil=True)
def _floor(docs: Any, impacts: Any, lists: Any, pool_d: Any, pool_v: Any, acc: Any) -> int:
    n_index = len(docs)
    for li in range(lists.shape[0]):
        start, end = lists[li, 0], lists[li, 1]
        ds, vs, at = (pool_d, pool_v, n_index) if start >= n_index else (docs, impacts, 0)
        for j in range(np.uint64(start - at), np.uint64(end - at)):
            acc[ds[j]] += vs[j]
    best = 0
    for i in range(len(acc)):
        best = max(best, acc[i])
        acc[i] = 0
    return best


def _fastest(run: Callable[[], object], passes: int) -> float:
    best = math.inf
    for _ in range(passes):
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    return best


def _row(name: str, queries: list[str], retriever: Retriever, model: Any,
         tokenize: Callable[[str], list[str]], search: Search, passes: int) -> str:
    """One query file's line of the table."""
    scorer, plan_of = kernel_view(retriever)
    plans = [p for p in map(plan_of, queries) if p]
    tables = [scorer.list_table(plan)[0] for plan in plans]
    pool_d, pool_v = scorer.unions.arrays  # after the tables: they may grow the pool
    indptr, vocab = model.scores["indptr"], model.vocab_dict
    ours = sum(int((t[:, 1] - t[:, 0]).sum()) for t in tables) / len(plans)
    theirs = sum(sum(int(indptr[vocab[w] + 1] - indptr[vocab[w]])
                     for w in tokenize(q) if w in vocab) for q in queries) / len(queries)
    acc = np.zeros(scorer.n_docs, dtype=np.int64)

    def floor() -> None:
        for t in tables:
            _floor(scorer.docs, scorer.impacts, t, pool_d, pool_v, acc)

    def kernel(k: int) -> None:
        for plan in plans:
            scorer.score_top(plan, k)

    def peer(k: int) -> None:
        for q in queries:
            search(q, k)

    floor(), kernel(10), peer(10)  # compiled, caches warm
    us = {"floor": _fastest(floor, passes) / len(plans) * 1e6}
    for k in (10, 100):
        us[f"kernel{k}"] = _fastest(functools.partial(kernel, k), passes) / len(plans) * 1e6
        us[f"peer{k}"] = _fastest(functools.partial(peer, k), passes) / len(queries) * 1e6
    return (f"| {name} ({len(plans)}) | {ours:,.0f} / {theirs:,.0f} ({ours / theirs:.2f}x) "
            f"| {us['floor']:.1f} | {us['kernel10']:.1f} | {us['kernel100']:.1f} "
            f"| {us['peer10']:.1f} | {us['peer100']:.1f} | {us['floor'] / us['peer10']:.2f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", type=Path, help="a directory from make_synthetic.py")
    parser.add_argument("--engine", default="bm25@2")
    parser.add_argument("--passes", type=int, default=5)
    args = parser.parse_args()
    lines = (args.corpus / "corpus.jsonl").read_bytes().splitlines()
    retriever = Retriever(load_corpus(args.corpus / "corpus.jsonl", max_docs=10**8),
                          args.engine)
    records = [orjson.loads(line) for line in lines]
    model, tokenize = bm25s_model([r["text"] for r in records], backend="numba")
    search = bm25s_search([r["_id"] for r in records], model, tokenize, "numba")
    print(f"{args.corpus} ({len(lines):,} documents), {args.engine} against bm25s-numba; "
          f"us a query, fastest of {args.passes} passes")
    print("| queries | postings: ours / bm25s | floor | kernel @10 | kernel @100 | "
          "bm25s @10 | bm25s @100 | floor / bm25s @10 |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for name in ("q3", "q8"):
        queries = [orjson.loads(line)["text"]
                   for line in (args.corpus / f"{name}.jsonl").read_bytes().splitlines()]
        print(_row(name, queries, retriever, model, tokenize, search, args.passes),
              flush=True)


if __name__ == "__main__":
    main()
