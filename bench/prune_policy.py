"""When MaxScore pays: both top-k paths timed per query, and the share rule fitted to them.

Run by hand (not a test):

    python bench/prune_policy.py measure bench/data/syn100k /tmp/syn100k.json \\
        bench/data/syn100k/q3.jsonl bench/data/syn100k/q8.jsonl --first-words 4 5 6
    python bench/prune_policy.py measure ../shared/datasets/npl /tmp/npl.json \\
        ../shared/datasets/npl/queries.jsonl
    python bench/prune_policy.py fit /tmp/syn100k.json /tmp/npl.json

(ADR 0033 fitted syn100k, syn1m, NPL, CACM, CISI and Cranfield, each measured so.)

``measure`` builds ``--engine``'s index (default bm25@2) and scores every query's plan with
the kernel (``Bm25Scorer.score_top``) at k = 10 and 100, once MaxScore (every plan pruned)
and once exhaustively, three passes each in sequence (each query once per pass, so its
postings come from memory as in a stream of requests); the fastest of each is kept with
the plan's postings per query term. ``--first-words N..`` also times each file's queries
cut to their first N words (syn100k's q8 gives 4-, 5- and 6-word queries).

``fit`` reads such files and searches the rule ``prune iff longest >= (at - slope *
log10(postings / k)) * postings`` (plans of at most ``kernel.MAX_PRUNED`` terms) that is
never more than 1% slower than pruning every such plan on any (collection, query file, k)
and fastest on average; it prints each column's time against that old rule and against an
oracle choosing per query, on the files fitted or on ``--held-out`` ones. ADR 0033.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import orjson  # noqa: E402

from bench.kernel_view import kernel_view  # noqa: E402
from rookhaven import Retriever  # noqa: E402
from rookhaven.core.providers import kernel  # noqa: E402
from rookhaven.corpusfile import load_corpus  # noqa: E402

PASSES = 3
Row = dict[str, Any]


def _paths() -> dict[str, tuple[int, tuple[float, float]]]:
    """(MAX_PRUNED, PRUNE_SHARE) forcing each path."""
    return {"exhaustive": (0, (-1.0, 0.0)), "pruned": (10**6, (-1.0, 0.0))}


def _query_sets(queries: list[Path], first_words: list[int]) -> list[tuple[str, list[str]]]:
    """(name, texts) per query file, and per file and N of ``first_words`` its texts cut to
    their first N words (where that cuts any)."""
    sets = []
    for path in queries:
        texts = [orjson.loads(line)["text"] for line in path.read_bytes().splitlines()]
        sets.append((path.name, texts))
        longest = max((len(t.split()) for t in texts), default=0)
        sets += [(f"{path.name}:{n}w", [" ".join(t.split()[:n]) for t in texts])
                 for n in first_words if n < longest]
    return sets


def measure(corpus: Path, out: Path, queries: list[Path], engine: str,
            first_words: list[int]) -> None:
    retriever = Retriever(load_corpus(corpus / "corpus.jsonl", max_docs=10**8), engine)
    scorer, plan_of = kernel_view(retriever)
    rows: list[Row] = []
    saved = kernel.MAX_PRUNED, kernel.PRUNE_SHARE
    try:
        for name, texts in _query_sets(queries, first_words):
            plans = [p for p in map(plan_of, texts) if p]
            for k in (10, 100):
                best = {path: [math.inf] * len(plans) for path in _paths()}
                for plan in plans[:10]:
                    scorer.score_top(plan, k)  # compiled, caches warm
                for _ in range(PASSES):
                    for path, (max_pruned, share) in _paths().items():
                        kernel.MAX_PRUNED, kernel.PRUNE_SHARE = max_pruned, share
                        for i, plan in enumerate(plans):
                            start = time.perf_counter()
                            scorer.score_top(plan, k)
                            best[path][i] = min(best[path][i], time.perf_counter() - start)
                for i, plan in enumerate(plans):
                    lists, groups, _ = scorer.list_table(plan)
                    lengths = [int((lists[groups[g]:groups[g + 1], 1]
                                    - lists[groups[g]:groups[g + 1], 0]).sum())
                               for g in range(len(groups) - 1)]
                    rows.append({"collection": corpus.name, "file": name, "k": k,
                                 "terms": len(plan), "lengths": lengths,
                                 "pruned_us": best["pruned"][i] * 1e6,
                                 "exhaustive_us": best["exhaustive"][i] * 1e6})
                pruned = sum(best["pruned"]) / len(plans) * 1e6
                whole = sum(best["exhaustive"]) / len(plans) * 1e6
                print(f"{corpus.name} {name} k={k}: pruned {pruned:.0f} us, "
                      f"exhaustive {whole:.0f} us a query", flush=True)
    finally:
        kernel.MAX_PRUNED, kernel.PRUNE_SHARE = saved
    out.write_text(json.dumps(rows))


def _read(files: list[Path]) -> list[Row]:
    """The rows of ``measure`` files, each plan's lengths as the kernel's rule reads them."""
    rows = [row for f in files for row in json.loads(f.read_text())]
    for row in rows:
        row["lengths"] = np.asarray(row["lengths"], dtype=np.int64)
    return rows


def _columns(rows: list[Row]) -> dict[tuple[str, str, int], list[Row]]:
    columns: dict[tuple[str, str, int], list[Row]] = defaultdict(list)
    for row in rows:
        columns[(row["collection"], row["file"], row["k"])].append(row)
    return columns


def _time(rows: list[Row], at: float, slope: float) -> float:
    # The kernel's own rule (kernel._prunes), with the constants under trial.
    return float(sum(r["pruned_us"] if kernel._prunes(r["lengths"], r["k"], kernel.MAX_PRUNED,
                                                      at, slope) else r["exhaustive_us"]
                     for r in rows))


def fit(files: list[Path], held_out: list[Path]) -> None:
    columns = _columns(_read(files))
    old = {c: _time(rs, -1.0, 0.0) for c, rs in columns.items()}  # every plan <= 10 pruned
    found: list[tuple[float, float, float, float]] = []
    for at in (x / 40 for x in range(12, 60)):
        for slope in (x / 40 for x in range(16)):
            ratios = [_time(rs, at, slope) / old[c] for c, rs in columns.items()]
            found.append((sum(ratios) / len(ratios), max(ratios), at, slope))
    mean, worst, at, slope = min(f for f in found if f[1] <= 1.01)
    print(f"rule: at {at}, slope {slope}: mean {mean:.3f}, worst {worst:.3f} of the old rule's "
          f"time (kernel.PRUNE_SHARE is {kernel.PRUNE_SHARE})")
    shown = _columns(_read(held_out)) or columns
    if held_out:
        print("  on the held-out files:")
    for column, rs in sorted(shown.items()):
        old_time = _time(rs, -1.0, 0.0)
        oracle = sum(min(r["pruned_us"], r["exhaustive_us"]) for r in rs)
        new = _time(rs, at, slope)
        print(f"  {column[0]} {column[1]} k={column[2]}: {len(rs)} queries, "
              f"new/old {new / old_time:.3f}, new/oracle {new / oracle:.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    m = sub.add_parser("measure")
    m.add_argument("corpus", type=Path)
    m.add_argument("out", type=Path)
    m.add_argument("queries", type=Path, nargs="+")
    m.add_argument("--engine", default="bm25@2")
    m.add_argument("--first-words", type=int, nargs="*", default=[])
    f = sub.add_parser("fit")
    f.add_argument("files", type=Path, nargs="+")
    f.add_argument("--held-out", type=Path, nargs="*", default=[],
                   help="files not fitted on: the rule found is shown on these")
    args = parser.parse_args()
    if args.command == "measure":
        measure(args.corpus, args.out, args.queries, args.engine, args.first_words)
    else:
        fit(args.files, args.held_out)


if __name__ == "__main__":
    main()
