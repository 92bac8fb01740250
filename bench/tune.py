#!/usr/bin/env python3
"""Leave-one-collection-out parameter choice for bm25@3: choose on three, report the fourth.

    python bench/tune.py [--datasets ../shared/datasets] [--cache bench/data/tune-cache.json]

Runs a modest grid of bm25@3 parameters (lower-bounded tf, feedback method and its
parameters, feedback scope, then stop words and stemmer on top of each fold's choice) on the
four shared collections, every run cached by (collection, parameters) so that a re-run only
computes what is new. For each fold the configuration with the best mean nDCG@10 on the
three other collections is chosen and its nDCG@10 and recall@100 on the left-out one are
reported next to bm25@1's. The defaults to ship are the choices every fold agrees on
(printed last); a choice the folds disagree on is listed with each fold's pick.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from rookhaven import Retriever  # noqa: E402
from rookhaven.evaluation import load_collection, run_collection  # noqa: E402

DATASETS = ("cranfield", "cisi", "cacm", "npl")
BASELINE = ("bm25@1", {})
TF = [{"tf_bound": "none"}, {"tf_bound": "bm25+", "delta": 0.25},
      {"tf_bound": "bm25+", "delta": 0.5}, {"tf_bound": "bm25l", "delta": 0.25},
      {"tf_bound": "bm25l", "delta": 0.5}]
FEEDBACK = [{"feedback": "none"}] + [
    {"feedback": m, "fb_docs": d, "fb_terms": t, "original_weight": a, "feedback_scope": s}
    for m, d, t, a, s in itertools.product(("rm3", "bo1"), (5, 10), (10, 20), (0.5, 0.7),
                                           ("whole-query", "subquery"))]
ANALYSIS = [{"stopwords": "none"}, {"stemmer": "none"}, {"stopwords": "none", "stemmer": "none"}]


def grid() -> list[dict[str, Any]]:
    """Stage one: every lower-bounded tf with every feedback setting."""
    return [{**tf, **fb} for tf, fb in itertools.product(TF, FEEDBACK)]


def key(engine: str, params: dict[str, Any]) -> str:
    return engine + " " + json.dumps(params, sort_keys=True)


class Runs:
    """nDCG@10 and recall@100 per (collection, engine, parameters), cached on disk."""

    def __init__(self, datasets: Path, cache: Path) -> None:
        self.datasets, self.cache = datasets, cache
        self.data: dict[str, dict[str, list[float]]] = (
            json.loads(cache.read_text()) if cache.exists() else {})
        self.collections: dict[str, Any] = {}

    def get(self, name: str, engine: str, params: dict[str, Any]) -> list[float]:
        table = self.data.setdefault(name, {})
        k = key(engine, params)
        if k not in table:
            if name not in self.collections:
                self.collections[name] = load_collection(self.datasets / name, max_docs=10**7)
            collection = self.collections[name]
            start = time.perf_counter()
            retriever = Retriever(collection.documents, engine, **params)
            result = run_collection(collection, retriever, budget=100, seed="rookhaven-default")
            table[k] = [result.metrics["ndcg@10"], result.metrics["recall@100"]]
            print(f"{name} {k}: {table[k][0]:.4f} {table[k][1]:.4f} "
                  f"({time.perf_counter() - start:.1f} s)", file=sys.stderr)
            self.cache.parent.mkdir(parents=True, exist_ok=True)
            self.cache.write_text(json.dumps(self.data, indent=0, sort_keys=True))
        return table[k]


def choose(runs: Runs, train: list[str], candidates: list[dict[str, Any]]) -> dict[str, Any]:
    """The candidate with the best mean nDCG@10 over ``train`` (ties: the earlier one)."""
    def mean(p: dict[str, Any]) -> float:
        return sum(runs.get(n, "bm25@3", p)[0] for n in train) / len(train)
    return max(candidates, key=lambda p: (round(mean(p), 6), -candidates.index(p)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=Path, default=ROOT.parent / "shared" / "datasets")
    parser.add_argument("--cache", type=Path, default=ROOT / "bench" / "data" / "tune-cache.json")
    args = parser.parse_args()
    runs = Runs(args.datasets, args.cache)
    first = grid()
    print("| left out | chosen on the other three | nDCG@10 | bm25@1 | recall@100 | bm25@1 |")
    print("|---|---|---:|---:|---:|---:|")
    picks = {}
    for out in DATASETS:
        train = [n for n in DATASETS if n != out]
        best = choose(runs, train, first)
        best = choose(runs, train, [best] + [{**best, **a} for a in ANALYSIS])
        picks[out] = best
        got, base = runs.get(out, "bm25@3", best), runs.get(out, *BASELINE)
        shown = ", ".join(f"{k}={v}" for k, v in best.items())
        print(f"| {out} | {shown} | {got[0]:.3f} | {base[0]:.3f} | {got[1]:.3f} | "
              f"{base[1]:.3f} |")
    agreed = {k: v for k, v in picks["cranfield"].items()
              if all(p.get(k) == v for p in picks.values())}
    print("\nevery fold chose:", json.dumps(agreed, sort_keys=True))
    for k in sorted({k for p in picks.values() for k in p} - set(agreed)):
        print(f"folds differ on {k}:", {n: p.get(k, "(default)") for n, p in picks.items()})


if __name__ == "__main__":
    main()
