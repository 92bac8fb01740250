#!/usr/bin/env python3
"""Issue 27, beyond the grid: IDF formula, prefix, coverage, query term counts.

    python bench/variants27.py run [--jobs 2]
    python bench/variants27.py report

Variants are switched by environment variables read in the clone only (RH27_IDF in
rookhaven/core/providers/impacts.py, RH27_QTF in bm25.py), set per task in the worker.
Cache: bench/data/variants27-cache.json, keys "<engine> <params json> <env json>".
Peers and the bm25@2 reference come from bench/data/tune-cache.json (bench/tune.py).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import tune
from tune import NEVER, Runs, balanced, collections, key, mean, paired_p

from rookhaven.core.providers.bm25sel import SELECTIVE_FIELD_WEIGHTS

CACHE = tune.ROOT / "bench" / "data" / "variants27-cache.json"
RESULTS = tune.ROOT / "bench" / "data" / "variants27-results.json"
HARD = ("cisi", "time", "cranfield-titles")
BEST = {"k1": 2.0, "b": 0.6, "tf_bound": "none", "identifiers": "split",
        "field_weights": dict(SELECTIVE_FIELD_WEIGHTS), "fb_min_length": NEVER}
ONES = {"title": 1.0, "name": 1.0, "keywords": 1.0, "parameters": 1.0, "text": 1.0}
IDFS = ["lucene", "okapi", "atire", "bm25plus", "robertson"]  # bm25l == lucene algebraically


def variants() -> list[tuple[str, str, dict[str, Any], dict[str, str]]]:
    """(label, engine, params, env)."""
    out = []
    for idf in IDFS:
        out.append((f"best idf={idf}", "bm25@4", BEST, {"RH27_IDF": idf}))
    for idf in IDFS:
        out.append((f"bm25@2 idf={idf}", "bm25@2", {}, {"RH27_IDF": idf}))
    out += [
        ("best prefix 0", "bm25@4", {**BEST, "prefix_weight": 0.0}, {}),
        ("best coverage 0", "bm25@4", {**BEST, "coverage": 0.0}, {}),
        ("best qtf distinct", "bm25@4", BEST, {"RH27_QTF": "distinct"}),
        ("bm25@2 qtf distinct", "bm25@2", {}, {"RH27_QTF": "distinct"}),
        # extras: both off; field weights all 1 (the peers see one text); rank_bm25's recipe
        ("best prefix 0 coverage 0", "bm25@4", {**BEST, "prefix_weight": 0.0,
                                                 "coverage": 0.0}, {}),
        ("best fields all 1", "bm25@4", {**BEST, "field_weights": ONES}, {}),
        ("rank_bm25-like (okapi, k1 1.5 b .75, no prefix/cov, fields 1)", "bm25@4",
         {**BEST, "k1": 1.5, "b": 0.75, "prefix_weight": 0.0, "coverage": 0.0,
          "field_weights": ONES}, {"RH27_IDF": "okapi"}),
        ("best okapi, no prefix/cov, fields 1", "bm25@4",
         {**BEST, "prefix_weight": 0.0, "coverage": 0.0, "field_weights": ONES},
         {"RH27_IDF": "okapi"}),
    ]
    return out


def combos() -> list[tuple[str, str, dict[str, Any], dict[str, str]]]:
    """Extra, hard three only: rank_bm25's recipe (okapi, no prefix/coverage, fields 1) and
    the grid's best base with okapi/distinct qtf, over k1 x b."""
    out = []
    for k1 in (1.2, 1.5, 2.0, 3.0):
        for b in (0.6, 0.75, 0.9):
            out.append((f"rb-like k1 {k1} b {b}", "bm25@4",
                        {**BEST, "k1": k1, "b": b, "prefix_weight": 0.0, "coverage": 0.0,
                         "field_weights": ONES}, {"RH27_IDF": "okapi"}))
            out.append((f"okapi k1 {k1} b {b}", "bm25@4", {**BEST, "k1": k1, "b": b},
                        {"RH27_IDF": "okapi"}))
            out.append((f"qtf distinct k1 {k1} b {b}", "bm25@4", {**BEST, "k1": k1, "b": b},
                        {"RH27_QTF": "distinct"}))
    return out


def vkey(engine: str, params: dict[str, Any], env: dict[str, str]) -> str:
    return key(engine, params) + " " + json.dumps(env, sort_keys=True)


def _task(path: str, engine: str, params: dict[str, Any], env: dict[str, str]
          ) -> dict[str, Any]:
    for name in ("RH27_IDF", "RH27_QTF"):
        os.environ.pop(name, None)
    os.environ.update(env)
    print(f"env {env}", file=sys.stderr)
    got = tune._evaluate(path, engine, params)
    return {vkey(engine, params, env): got[key(engine, params)]}


def load() -> dict[str, dict[str, Any]]:
    return json.loads(CACHE.read_text()) if CACHE.exists() else {}


def run(jobs: int) -> None:
    data = load()
    meta = collections()
    order = sorted(meta, key=lambda n: (meta[n].get("held_out", False), n))
    todo = [(n, e, p, env) for _, e, p, env in variants() for n in order
            if vkey(e, p, env) not in data.get(n, {})]
    todo += [(n, e, p, env) for _, e, p, env in combos() for n in HARD
             if vkey(e, p, env) not in data.get(n, {})]
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        futures = [(n, pool.submit(_task, meta[n]["path"], e, p, env)) for n, e, p, env in todo]
        for n, f in futures:
            data.setdefault(n, {}).update(f.result())
            CACHE.write_text(json.dumps(data, sort_keys=True))


def report() -> None:
    base = Runs(1).data
    data = load()
    meta = collections()
    tuning = [n for n in meta if not meta[n].get("held_out")]
    order = sorted(meta, key=lambda n: (meta[n].get("held_out", False), meta[n]["genre"], n))
    ref = {n: base[n][key("bm25@2", {})]["ndcg@10"] for n in meta}
    bar = {}
    for n in meta:
        peers = {k[5:]: mean(v["ndcg@10"]) for k, v in base[n].items() if k.startswith("peer:")}
        bar[n] = max(peers.values()) + 0.01
    res: dict[str, Any] = {"bar": bar, "bm25@2": {n: mean(ref[n]) for n in meta},
                           "variants": {}}
    # sanity: the lucene runs reproduce the grid's cached runs exactly
    for n in meta:
        for eng, p in (("bm25@4", BEST), ("bm25@2", {})):
            mine = data.get(n, {}).get(vkey(eng, p, {"RH27_IDF": "lucene"}))
            theirs = base[n].get(key(eng, p))
            if mine and theirs and mine["ndcg@10"] != theirs["ndcg@10"]:
                print(f"WARNING: {n} {eng} lucene differs from tune-cache")
    print("| variant | " + " | ".join(order) + " | #bar (of 11) | 3 hard |")
    print("|---|" + "---:|" * (len(order) + 2))
    print("| peer+0.01 | " + " | ".join(f"{bar[n]:.3f}" for n in order) + " | | |")
    print("| bm25@2 | " + " | ".join(f"{mean(ref[n]):.3f}" for n in order) + " | | |")
    for label, e, p, env in variants():
        k = vkey(e, p, env)
        if not all(k in data.get(n, {}) for n in meta):
            print(f"| {label} | incomplete |")
            continue
        cells, per = [], {}
        for n in order:
            got = data[n][k]["ndcg@10"]
            v = mean(got)
            ok = v >= bar[n]
            pv = paired_p(got, ref[n]) if v < mean(ref[n]) else None
            per[n] = {"ndcg": v, "meets_bar": ok, "p_vs_bm25@2_if_worse": pv}
            cell = f"{v:.3f}" + (" ok" if ok else "")
            if pv is not None:
                cell += f" (p={pv:.2g})"
            cells.append(cell)
        nb = sum(per[n]["meets_bar"] for n in tuning)
        nh = sum(per[n]["meets_bar"] for n in HARD)
        bal = balanced({n: per[n]["ndcg"] for n in tuning}, meta)
        res["variants"][label] = {"key": k, "per": per, "n_bar": nb, "hard_met": nh,
                                  "balanced": bal}
        print(f"| {label} | " + " | ".join(cells) + f" | {nb} | {nh}/3 |")
    print("\n'ok' = meets best peer + 0.01; (p=...) paired_p vs bm25@2 where below bm25@2")
    print("\nmargins on the hard three (variant - bar):")
    for label, v in res["variants"].items():
        print(f"- {label}: " + ", ".join(f"{n} {v['per'][n]['ndcg'] - bar[n]:+.4f}"
                                         for n in HARD) + f"; balanced {v['balanced']:.4f}")
    print("\nextra combos on the hard three (nDCG@10 - bar):")
    res["combos"] = {}
    for label, e, p, env in combos():
        k = vkey(e, p, env)
        if all(k in data.get(n, {}) for n in HARD):
            m = {n: mean(data[n][k]["ndcg@10"]) - bar[n] for n in HARD}
            res["combos"][label] = m
    for n in HARD:
        lab = max(res["combos"], key=lambda lb: res["combos"][lb][n]) if res["combos"] else None
        if lab:
            print(f"- best for {n}: {lab}: {res['combos'][lab][n] + bar[n]:.4f} "
                  f"(margin {res['combos'][lab][n]:+.4f})")
    RESULTS.write_text(json.dumps(res, indent=1, sort_keys=True))
    print(f"\nresults: {RESULTS}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("command", choices=("run", "report"))
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    run(args.jobs) if args.command == "run" else report()


if __name__ == "__main__":
    main()
