#!/usr/bin/env python3
"""The per-request time outside the kernel: a full retrieve with the index's answers cached.

Run by hand (not a test), from the repository root:

    python bench/overhead.py bench/data/syn100k --engine bm25@2 --k 100 [--trees A,B]
    python bench/overhead.py bench/data/syn100k --engine bm25@3 --cold
    python bench/overhead.py bench/data/syn100k --engine bm25@3 --cold --whole --trees A,B

Each query of the directory's q3.jsonl and q8.jsonl goes through ``Retriever.result_data``
and ``canonical_bytes`` once, which fills a cache of the index's top-k answers; the timed
rounds then reuse those answers, so what is measured is everything but the kernel: the
tokenising, decomposition, tie keys, the cut and the merge, the audit's assembly and the
encoding. With ``--trees``, each tree's ``rookhaven`` (a checkout, e.g. a ``git worktree``
of an older commit) is loaded in turn into this one process and the rounds alternate
between them, so the machine's noise falls on both alike; the digest printed beside each
tree (sha256 over the results' canonical bytes) must be the same for a speed-only change.
The best round is reported, us per request. ``--cold`` (engines with a feedback memo, bm25@3)
empties the memo before every request and caches the scorer's answers per plan instead, so
the feedback's own Python (the first pass's order, the term choice's wrapper, the plan and
its list table) is counted too; the compiled term choice runs as it would. ``--whole``
caches nothing, so the kernel is timed too: trees compared request for request.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import time
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parent.parent


def _load(tree: Path) -> Any:
    """``rookhaven`` imported from ``tree``, replacing any copy already imported."""
    for name in [m for m in sys.modules if m == "rookhaven" or m.startswith("rookhaven.")]:
        del sys.modules[name]
    sys.path.insert(0, str(tree))
    try:
        import rookhaven
        import rookhaven.core.corpus
    finally:
        sys.path.pop(0)
    return rookhaven


def _cached(ask: Any, answers: dict[Any, Any]) -> Any:
    """``ask(first, budget)`` answered once per (first, budget), ``first`` a sequence."""
    def answer(first: Any, budget: int) -> Any:
        key = (tuple(first), budget)
        if key not in answers:
            answers[key] = ask(first, budget)
        return answers[key]
    return answer


def _setup(tree: Path, corpus_dir: Path, engine: str, k: int, cold: bool,
           whole: bool) -> tuple[Any, list[Any], str]:
    """A retriever of ``tree`` whose index answers from a cache, its requests, a digest."""
    rookhaven = _load(tree)
    with open(corpus_dir / "corpus.jsonl", "rb") as lines:
        corpus = rookhaven.core.corpus.Corpus.from_records(
            {"id": r["_id"], "text": r["text"]} for r in map(orjson.loads, lines))
    retriever = rookhaven.Retriever(corpus, engine)
    index, answers = retriever.index, {}
    memo = getattr(index, "_feedback", None) if cold else None
    if cold and memo is None:
        raise SystemExit(f"--cold: {engine} keeps no feedback memo (try bm25@3)")
    if memo is not None and not whole:  # cache per plan, below the feedback (frozen)
        scorer = index.scorer
        object.__setattr__(scorer, "score_top", _cached(scorer.score_top, answers))
    elif not whole:  # with --whole nothing is cached: the kernel is timed too
        index.top = _cached(index.top, answers)
        retriever._top = index  # the retriever reads its top-k index from here
    requests = [rookhaven.RetrievalRequest(query=orjson.loads(line)["text"], recall_budget=k)
                for name in ("q3.jsonl", "q8.jsonl")
                for line in (corpus_dir / name).read_bytes().splitlines() if line.strip()]
    digest = hashlib.sha256()

    def answer(request: Any) -> bytes:
        if memo is not None:
            memo.clear()
        # What a worker stores; a tree from before ``result_bytes`` encodes the plain data.
        if hasattr(retriever, "result_bytes"):
            return b"".join(retriever.result_bytes(request))
        return b"".join(rookhaven.core.canonical.result_bytes(retriever.result_data(request)))

    for request in requests:  # fills the cache; warms JIT and tie-key caches
        digest.update(answer(request))
    return answer, requests, digest.hexdigest()[:16]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus_dir", type=Path)
    parser.add_argument("--engine", default="bm25@2")
    parser.add_argument("--k", type=int, default=100)
    parser.add_argument("--trees", default=str(ROOT),
                        help="comma-separated checkouts to compare (default: this one)")
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--cold", action="store_true",
                        help="empty the feedback memo before every request (bm25@3)")
    parser.add_argument("--whole", action="store_true",
                        help="cache nothing: time the whole request, kernel included")
    args = parser.parse_args()
    setups = [(tree, *_setup(Path(tree), args.corpus_dir, args.engine, args.k, args.cold,
                            args.whole))
              for tree in args.trees.split(",")]
    best = [float("inf")] * len(setups)
    for _ in range(args.rounds):
        for i, (_, answer, requests, _) in enumerate(setups):
            began = time.perf_counter()
            for request in requests:
                answer(request)
            best[i] = min(best[i], (time.perf_counter() - began) / len(requests) * 1e6)
    kind = (" cold" if args.cold else "") + (" whole" if args.whole else "")
    for (tree, _, requests, digest), us in zip(setups, best, strict=True):
        where = "in all" if args.whole else "outside the kernel"
        print(f"{tree}  {args.engine}{kind} k={args.k}: {us:.1f} us/request {where} "
              f"({len(requests)} requests), digest {digest}")


if __name__ == "__main__":
    main()
