"""What the kernel's memory traffic costs the path outside it: the kernel swapped for sweeps.

Run by hand (not a test):

    python bench/outside_footprint.py bench/data/syn100k --engine bm25@6 --k 10 --rounds 4

For each of ``--files`` of the directory (q8.jsonl unless told) and each ``--k``, the requests
run through ``Retriever.result_bytes`` (what a worker stores) with the index's top-k answered
in one of these ways, the time a request outside the answer being what is reported (issue
56's second target, as ``retrieve_split.py`` measures it; a query of several parts would
also look scores up outside the answer, which the bench's query files never do):

- **kernel**: the real one (plan, list table, compiled top-k);
- **pruned**: the real one with every plan of up to ``kernel.MAX_PRUNED`` terms scored by
  MaxScore (``kernel.PRUNE_SHARE`` set to always prune), which reads fewer postings;
- **sweep F**: the answer remembered from a warm-up, then a compiled loop that reads the
  first F of each of the plan's postings ranges (documents and values, 8 bytes a posting,
  the union pool's ranges too) and nothing else: the postings a kernel would bring into
  the caches, without its ranking. ``sweep 0.75`` reads as many bytes as a layout of
  6-byte postings (16-bit document numbers) would at F = 1;
- **idle**: the answer remembered, then a compiled loop of arithmetic on registers (no
  memory read or written) as long as the kernel takes a request (a warm pass before the
  rounds): what the kernel's duration alone costs the path after it (something outside the
  process evicts in proportion to time; ADR 0050);
- **none**: the answer remembered, nothing read: the path with warm caches, and the
  round's control (``retrieve_split.py``'s): on a shared machine it reads 1.5-1.8x its usual
  time when the machine is slowed, and the rest of the round with it.

The ways alternate within each of ``--rounds`` rounds (each the fastest of three passes), so
they are compared in the same state of a shared machine, whose state moves the numbers by
half or more within minutes. The answer's own time is printed in brackets.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import orjson  # noqa: E402
from numba import njit  # noqa: E402

from rookhaven import RetrievalRequest, Retriever  # noqa: E402
from rookhaven.core.providers import kernel  # noqa: E402
from rookhaven.corpusfile import load_corpus  # noqa: E402

FRACTIONS = (1.0, 0.75, 0.4, 0.2)


@njit(cache=True, nogil=True)
def sweep(docs: Any, values: Any, pool_d: Any, pool_v: Any, rows: Any,
          fraction: float) -> int:  # pragma: no cover - compiled
    """Read the first ``fraction`` of each range ``rows`` (start, end; past ``len(docs)``
    the pool's), documents and values: a sum, so nothing is optimised away."""
    total = 0
    n_index = len(docs)
    for i in range(len(rows)):
        start, end = rows[i, 0], rows[i, 1]
        end = start + int((end - start) * fraction)
        if start >= n_index:
            for j in range(start - n_index, end - n_index):
                total += pool_d[j] + pool_v[j]
        else:
            for j in range(start, end):
                total += docs[j] + values[j]
    return total


@njit(cache=True, nogil=True)
def idle(steps: int) -> int:  # pragma: no cover - compiled
    """``steps`` dependent multiply-adds on one register: time without memory traffic."""
    x = np.uint64(1)
    for _ in range(steps):
        x = x * np.uint64(6364136223846793005) + np.uint64(1442695040888963407)
    return int(x & np.uint64(1))


def steps_per_us() -> float:
    """How many of ``idle``'s steps take a microsecond here (the fastest of five)."""
    idle(1000)
    best = float("inf")
    for _ in range(5):
        began = time.perf_counter()
        idle(1_000_000)
        best = min(best, time.perf_counter() - began)
    return 1_000_000 / (best * 1e6)


class Answers:
    """The index's ``top``, answered as the current way says; the time spent in it."""

    def __init__(self, index: Any) -> None:
        self.index, self.real = index, index.top
        self.scorer = index.scorer
        self.known: dict[Any, Any] = {}
        self.rows: dict[Any, Any] = {}
        self.way = "kernel"
        self.spent = 0.0
        self.idle_steps = 0

    def top(self, terms: Any, k: int) -> Any:
        began = time.perf_counter()
        key = (tuple(terms), k)
        if key not in self.known:
            self.known[key] = self.real(terms, k)
            lists, _, _ = self.scorer.list_table(self.index.plan(terms))
            self.rows[key] = np.ascontiguousarray(lists[:, :2])
        if self.way == "kernel":
            found = self.real(terms, k)
        elif self.way == "pruned":
            rule, kernel.PRUNE_SHARE = kernel.PRUNE_SHARE, (0.0, 0.0)
            try:
                found = self.real(terms, k)
            finally:
                kernel.PRUNE_SHARE = rule
        else:
            found = self.known[key]
            if self.way == "idle":
                idle(self.idle_steps)
            elif self.way != "none":
                pool_d, pool_v = self.scorer.unions.arrays
                sweep(self.scorer.docs, self.scorer.impacts, pool_d, pool_v, self.rows[key],
                      float(self.way.split()[1]))
        self.spent += time.perf_counter() - began
        return found


def outside(retriever: Retriever, answers: Answers, requests: list[RetrievalRequest],
            ) -> tuple[float, float]:
    """The fastest of three passes: us a request outside the answer, and in it."""
    best = (float("inf"), 0.0)
    for _ in range(3):
        answers.spent = 0.0
        began = time.perf_counter()
        for request in requests:
            retriever.result_bytes(request)
        took = time.perf_counter() - began
        best = min(best, ((took - answers.spent) / len(requests) * 1e6,
                          answers.spent / len(requests) * 1e6))
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus_dir", type=Path)
    parser.add_argument("--engine", default="bm25@6")
    parser.add_argument("--k", type=int, nargs="+", default=[10])
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--files", nargs="+", default=["q8.jsonl"])
    args = parser.parse_args()

    docs = load_corpus(args.corpus_dir / "corpus.jsonl", max_docs=10**7)
    retriever = Retriever(docs, args.engine)
    index = retriever.index
    if not hasattr(index, "scorer"):
        raise SystemExit(f"{args.engine} has no bm25 scorer to sweep the postings of")
    answers = Answers(index)
    index.top = answers.top  # type: ignore[attr-defined]
    ways = ["kernel", "pruned", *(f"sweep {f}" for f in FRACTIONS), "idle", "none"]
    rate = steps_per_us()
    for name in args.files:
        lines = (args.corpus_dir / name).read_bytes().splitlines()
        queries = [orjson.loads(line)["text"] for line in lines if line.strip()]
        for k in args.k:
            requests = [RetrievalRequest(query=q, recall_budget=k, seed=f"s{i}")
                        for i, q in enumerate(queries)]
            for way in ways:  # warm: JIT, the answers, the pool
                answers.way = way
                for request in requests:
                    retriever.result_bytes(request)
            answers.way = "kernel"  # the kernel's time a request, warm, for ``idle``
            took = outside(retriever, answers, requests)[1]
            answers.idle_steps = int(took * rate)
            found: dict[str, list[tuple[float, float]]] = {way: [] for way in ways}
            for _ in range(args.rounds):
                for way in ways:
                    answers.way = way
                    found[way].append(outside(retriever, answers, requests))
            print(f"{name[:2]}@{k}: us a request outside the answer (in it)")
            for way in ways:
                print(f"  {way:11}" + "".join(f"{o:8.1f} ({a:4.0f})" for o, a in found[way]))


if __name__ == "__main__":
    main()
