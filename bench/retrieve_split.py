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

Beside "outside", each column's **control**: the same requests with the index's answers
remembered (from a warm-up), timed in a pass after each timed pass: the path outside the
kernel with nothing between requests to push the interpreter's working set out of the
caches. The difference to "outside" is what the kernel's memory traffic and duration cost
the rest (``bench/outside_footprint.py`` parts it); the control itself tells the machine's
state: on these shared machines it reads 1.5-1.8x its usual time when the machine is slowed,
and every figure of that pass with it (ADR 0050). Each column keeps the fastest of
``--passes`` passes, untimed and timed, and of the controls. With ``--rounds N`` every column
is measured N times in turn, so its rounds lie seconds apart: the table gives the rounds'
medians, and after it each column's median and range, the rounds whose control reads within
``USUAL`` of the column's lowest (the machine at its usual speed) and their median, and every
round's outside and control: a neighbour's burst on a shared machine slows a round or a
minute of them, the control with them. ADR 0050 judges issue 56's second target by the
median of the usual rounds. ``--tree DIR`` times another
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
from statistics import median
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
# ``--tree DIR`` is read before anything is imported: that checkout's rookhaven is timed.
_TREE = sys.argv[sys.argv.index("--tree") + 1] if "--tree" in sys.argv[:-1] else None
sys.path.insert(0, _TREE or str(ROOT))

import orjson  # noqa: E402

from rookhaven import RetrievalRequest, Retriever  # noqa: E402
from rookhaven.core import analyzer, engine  # noqa: E402
from rookhaven.corpusfile import load_corpus  # noqa: E402

# A round whose control reads more than this above its column's lowest ran on a slowed
# machine (ADR 0050): its figures are printed, not judged.
USUAL = 0.10
STAGES = ("tokenise", "decompose", "allocate", "streams+tie keys", "kernel", "select",
          "cut+lists", "encode", "rest")


class Clock:
    """Exclusive time per stage, with a stack so nested stages are subtracted."""

    def __init__(self, timer: Callable[[], float] = time.perf_counter) -> None:
        self.spent: dict[str, float] = defaultdict(float)
        self._stack: list[list[Any]] = []
        self._timer = timer  # time.thread_time: the CPU this thread spent, not the wall

    def wrap(self, stage: str, function: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            frame = [stage, self._timer(), 0.0]  # stage, start, nested time
            self._stack.append(frame)
            try:
                return function(*args, **kwargs)
            finally:
                self._stack.pop()
                took = self._timer() - frame[1]
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


class Cached:
    """While in use, the index's answers are remembered (from their first call): the
    control's requests run everything but the kernel."""

    def __init__(self, retriever: Retriever) -> None:
        self.indexes = {id(retriever.index): retriever.index,
                        id(retriever._parts): retriever._parts}
        self.answers: dict[Any, Any] = {}
        self.before: dict[int, Any] = {}

    def __enter__(self) -> None:
        self.before = {key: index.__dict__.get("top") for key, index in self.indexes.items()}
        for index in self.indexes.values():
            def top(terms: Any, k: int, real: Any = index.top) -> Any:
                key = (tuple(terms), k, id(real))
                if key not in self.answers:
                    self.answers[key] = real(terms, k)
                return self.answers[key]
            index.top = top

    def __exit__(self, *exc: object) -> None:
        for key, index in self.indexes.items():  # as it was: the class's, or a wrapper
            if self.before[key] is None:
                del index.top
            else:
                index.top = self.before[key]


def measure(retriever: Retriever, clock: Clock, cached: Cached,
            requests: list[RetrievalRequest], passes: int) -> tuple[float, float, float]:
    """One round of a column: requests/s, us a request outside the kernel, and the
    control's us a request, each the fastest of ``passes`` passes (a timed pass and a
    control pass alternating)."""
    fastest, kernel_s, bare = float("inf"), 0.0, float("inf")
    for _ in range(passes):  # noise on a shared machine only ever slows a pass
        clock.spent.clear()
        began = time.perf_counter()
        for request in requests:
            retriever.result_bytes(request)
        took = time.perf_counter() - began
        if took < fastest:
            fastest, kernel_s = took, clock.spent["kernel"]
        with cached:
            began = time.perf_counter()
            for request in requests:
                retriever.result_bytes(request)
            bare = min(bare, time.perf_counter() - began)
    return (len(requests) / fastest, (fastest - kernel_s) / len(requests) * 1e6,
            bare / len(requests) * 1e6)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus_dir", type=Path)
    parser.add_argument("--engine", default="bm25@2")
    parser.add_argument("--k", type=int, nargs="+", default=[10, 100])
    parser.add_argument("--passes", type=int, default=3,
                        help="passes per column, untimed and timed; the fastest kept")
    parser.add_argument("--rounds", type=int, default=1,
                        help="rounds over every column; req/s, outside and control are the "
                             "rounds' medians, their ranges printed after the table")
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
    cached = Cached(retriever)
    for _, reqs in runs:
        with cached:  # the control's answers, and a pass to warm its path
            for request in reqs:
                retriever.result_bytes(request)
    rounds: dict[str, list[tuple[float, float, float]]] = {label: [] for label, _ in runs}
    for _ in range(args.rounds):  # spread over time: a neighbour's burst slows a few seconds
        for label, reqs in runs:
            rounds[label].append(measure(retriever, clock, cached, reqs, args.passes))
    plain = {label: median(r[0] for r in found) for label, found in rounds.items()}
    outside = {label: median(r[1] for r in found) for label, found in rounds.items()}
    control = {label: median(r[2] for r in found) for label, found in rounds.items()}
    instrument(clock)
    whole = clock.wrap("rest", retriever.result_bytes)
    print(f"{'':8}{'req/s':>8}{'outside':>9}{'control':>9}{'timed':>8}{'by shares':>10}  "
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
        print(f"{label:8}{plain[label]:8.0f}{outside[label]:9.1f}{control[label]:9.1f}"
              f"{total / len(reqs) * 1e6:8.0f}{by_shares:10.0f}  {shares}")
    if args.rounds > 1:
        print(f"{args.rounds} rounds a column: outside [range]; the rounds at the machine's "
              f"usual speed (control within {USUAL:.0%} of the column's lowest): their "
              "count and median outside; then each round's outside/control, us a request")
        for label, found in rounds.items():
            lowest = min(r[2] for r in found)
            usual = [r[1] for r in found if r[2] <= lowest * (1 + USUAL)]
            print(f"{label:8}{median(r[1] for r in found):6.1f} [{min(r[1] for r in found):.1f}"
                  f"-{max(r[1] for r in found):.1f}]  usual {len(usual)}: {median(usual):.1f}  "
                  + " ".join(f"{r[1]:.1f}/{r[2]:.1f}" for r in found))

if __name__ == "__main__":
    main()
