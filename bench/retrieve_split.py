"""Where a full audited retrieve spends its time: each stage of the bytes path, exclusive.

Run by hand (not a test):

    .venv/bin/python bench/retrieve_split.py bench/data/syn100k --engine bm25@2 --k 10 100

For each query file of the directory (q3.jsonl, q8.jsonl) and each ``--k``, the requests
run through ``Retriever.result_bytes`` (what a worker stores) once to warm up, then once
timed twice. First with only the kernel stage wrapped (the index's ``top``, ``score``,
``score_of``: its scoring and top-k): "outside" is that pass's time a request less its
kernel time, in us (issue 56's second target), and req/s its rate. Then with every stage
wrapped, for each stage's share: tokenise (the analyzer), decompose, allocate (largest
remainder), streams and tie keys, kernel, select (top-k cut and merge order), cut+lists (a
one-part query's cut, ranking and lists in one compiled call, ``hitlists.ranked_lists``,
ADR 0048, or its whole result, ``hitlists.one_part``, ADR 0049), encode (canonical bytes,
the compiled hit lists included), and the rest (audit assembly and the glue in
``Retriever``). Times are exclusive: a stage's nested stages are not counted
twice. Each wrapper costs ~1 us a call, so the second pass's shares carry ~10 us a request
of wrappers outside the kernel; "by shares" is the estimate earlier sessions reported (the
non-kernel share of the second pass times the first pass's time), which carries them too.

With ``--cached`` each request's index answers are remembered from the warm-up and the
requests run again untimed by stage: everything but the kernel, with nothing between
requests to push the interpreter's working set out of the caches (the "bare" cost; the
difference to "outside" is what the kernel's memory traffic costs the rest). Each column
keeps the fastest of ``--passes`` passes, untimed and timed. ``--tree DIR`` times another
checkout's ``rookhaven`` (e.g. a ``git worktree`` of an older commit) with this script, so
two trees are compared by one method.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
# ``--tree DIR`` is read before anything is imported: that checkout's rookhaven is timed.
_TREE = sys.argv[sys.argv.index("--tree") + 1] if "--tree" in sys.argv[:-1] else None
sys.path.insert(0, _TREE or str(ROOT))

import orjson  # noqa: E402

from rookhaven import RetrievalRequest, Retriever  # noqa: E402
from rookhaven.core import analyzer, engine  # noqa: E402
from rookhaven.corpusfile import load_corpus  # noqa: E402

STAGES = ("tokenise", "decompose", "allocate", "streams+tie keys", "kernel", "select",
          "cut+lists", "encode", "rest")


class Clock:
    """Exclusive time per stage, with a stack so nested stages are subtracted."""

    def __init__(self) -> None:
        self.spent: dict[str, float] = defaultdict(float)
        self._stack: list[list[Any]] = []

    def wrap(self, stage: str, function: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            frame = [stage, time.perf_counter(), 0.0]  # stage, start, nested time
            self._stack.append(frame)
            try:
                return function(*args, **kwargs)
            finally:
                self._stack.pop()
                took = time.perf_counter() - frame[1]
                self.spent[stage] += took - frame[2]
                if self._stack:
                    self._stack[-1][2] += took
        return timed


def instrument_kernel(retriever: Retriever, clock: Clock) -> None:
    """Wrap the kernel stage: the index's scoring and top-k."""
    for index in {id(retriever.index): retriever.index,
                  id(retriever._parts): retriever._parts}.values():
        for name in ("top", "score", "score_of"):
            if hasattr(index, name):
                setattr(index, name, clock.wrap("kernel", getattr(index, name)))


def instrument(clock: Clock) -> None:
    """Wrap every other stage (the kernel's wrapper is already in place)."""
    engine.decompose = clock.wrap("decompose", engine.decompose)  # type: ignore[attr-defined]
    engine.largest_remainder = clock.wrap(  # type: ignore[attr-defined]
        "allocate", engine.largest_remainder)
    engine.derive_streams = clock.wrap(  # type: ignore[attr-defined]
        "streams+tie keys", engine.derive_streams)
    engine.TieKeys = clock.wrap("streams+tie keys", engine.TieKeys)  # type: ignore[attr-defined]
    engine.top_k = clock.wrap("select", engine.top_k)  # type: ignore[attr-defined]
    for name in ("result_bytes", "contributions", "picked", "encoded_hits"):
        setattr(engine, name, clock.wrap("encode", getattr(engine, name)))
    engine.ranked = clock.wrap("select", engine.ranked)  # type: ignore[attr-defined]
    for name in ("ranked_picked", "ranked_lists", "streamed_lists", "one_part"):
        if hasattr(engine, name):  # an older tree, run with --tree, has neither
            setattr(engine, name, clock.wrap("cut+lists", getattr(engine, name)))
    cls = analyzer.Analyzer
    cls.terms = clock.wrap("tokenise", cls.terms)  # type: ignore[method-assign]


def bare(retriever: Retriever, requests: list[RetrievalRequest]) -> float:
    """The best of five passes over ``requests`` with each index answer remembered, in us a
    request: the path outside the kernel with warm caches."""
    answers: dict[Any, Any] = {}
    indexes = {id(retriever.index): retriever.index, id(retriever._parts): retriever._parts}
    before = {key: index.__dict__.get("top") for key, index in indexes.items()}
    for index in indexes.values():
        def top(terms: Any, k: int, real: Any = index.top) -> Any:
            key = (tuple(terms), k, id(real))
            if key not in answers:
                answers[key] = real(terms, k)
            return answers[key]
        index.top = top
    try:
        for request in requests:
            retriever.result_bytes(request)
        fastest = float("inf")
        for _ in range(5):
            began = time.perf_counter()
            for request in requests:
                retriever.result_bytes(request)
            fastest = min(fastest, time.perf_counter() - began)
    finally:
        for key, index in indexes.items():  # as it was: the class's, or a wrapper
            if before[key] is None:
                del index.top
            else:
                index.top = before[key]
    return fastest / len(requests) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus_dir", type=Path)
    parser.add_argument("--engine", default="bm25@2")
    parser.add_argument("--k", type=int, nargs="+", default=[10, 100])
    parser.add_argument("--cached", action="store_true",
                        help="also time each column with the index's answers cached")
    parser.add_argument("--passes", type=int, default=3,
                        help="passes per column, untimed and timed; the fastest kept")
    parser.add_argument("--tree", type=Path,
                        help="time another checkout's rookhaven (a worktree of an older "
                             "commit) with this script")
    args = parser.parse_args()

    docs = load_corpus(args.corpus_dir / "corpus.jsonl", max_docs=10**7)
    built = time.perf_counter()
    retriever = Retriever(docs, args.engine)
    print(f"{args.engine} over {len(docs):,} documents: index built in "
          f"{time.perf_counter() - built:.1f} s")
    runs = []
    for name in ("q3.jsonl", "q8.jsonl"):
        lines = (args.corpus_dir / name).read_bytes().splitlines()
        queries = [orjson.loads(line)["text"] for line in lines if line.strip()]
        for k in args.k:
            reqs = [RetrievalRequest(query=q, recall_budget=k, seed=f"s{i}")
                    for i, q in enumerate(queries)]
            runs.append((f"{name[:2]}@{k}", reqs))
    for _, reqs in runs:
        for request in reqs:  # warm: JIT, caches, expansions
            retriever.result_bytes(request)
    clock = Clock()
    instrument_kernel(retriever, clock)
    plain, outside = {}, {}
    for label, reqs in runs:
        fastest, kernel_s = float("inf"), 0.0
        for _ in range(args.passes):  # noise on a shared machine only ever slows a pass
            clock.spent.clear()
            began = time.perf_counter()
            for request in reqs:
                retriever.result_bytes(request)
            took = time.perf_counter() - began
            if took < fastest:
                fastest, kernel_s = took, clock.spent["kernel"]
        plain[label] = len(reqs) / fastest
        outside[label] = (fastest - kernel_s) / len(reqs) * 1e6
    if args.cached:
        for label, reqs in runs:
            print(f"{label:8}{bare(retriever, reqs):8.1f} us a request with the index's "
                  "answers cached")
    instrument(clock)
    whole = clock.wrap("rest", retriever.result_bytes)
    print(f"{'':8}{'req/s':>8}{'outside':>9}{'timed':>8}{'by shares':>10}  "
          + "  ".join(f"{s:>9}" for s in STAGES))
    for label, reqs in runs:
        passes = []
        for _ in range(args.passes):
            clock.spent.clear()
            for request in reqs:
                whole(request)
            passes.append(dict(clock.spent))
        spent = min(passes, key=lambda p: sum(p.values()))  # the fastest timed pass
        clock.spent.clear()
        clock.spent.update(spent)
        total = sum(clock.spent.values())
        shares = "  ".join(f"{clock.spent[s] / total:9.1%}" for s in STAGES)
        by_shares = (1 - clock.spent["kernel"] / total) * 1e6 / plain[label]
        print(f"{label:8}{plain[label]:8.0f}{outside[label]:9.1f}"
              f"{total / len(reqs) * 1e6:8.0f}{by_shares:10.0f}  {shares}")


if __name__ == "__main__":
    main()
