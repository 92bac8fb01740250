#!/usr/bin/env python3
"""Issue 27 sweep: can any bm25@4 configuration meet the default rule on the tuning set?

    python bench/sweep27.py run [--jobs 2] [--stage grid|fb|all]
    python bench/sweep27.py report

Grid (feedback off, fb_min_length 1<<20): k1 x b x tf_bound, identifiers split, title/name
weight 3 (bm25@4's default field weights). Then the best 3 with feedback gated as bm25@4's
defaults (fb_min_length 0, fb_max_gap 1.5). Uses bench/tune.py's Runs cache
(bench/data/tune-cache.json), keys "engine <params json>".
Rule per tuning collection: (a) paired_p(cand, bm25@2) >= 0.05 or cand mean >= bm25@2 mean;
(b) cand nDCG@10 >= best peer + 0.01.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import tune
from tune import NEVER, Runs, balanced, collections, key, mean, paired_p

from rookhaven.core.providers.bm25sel import SELECTIVE_FIELD_WEIGHTS

RESULTS = tune.ROOT / "bench" / "data" / "sweep27-results.json"
K1 = [1.2, 1.5, 2.0, 0.9]          # 0.9 last: first to drop if time runs short
B = [0.3, 0.45, 0.6, 0.75, 0.9]
TF = ["none", "bm25+"]
FB_ON = {"fb_min_length": 0, "fb_max_gap": 1.5}


def grid() -> list[dict[str, Any]]:
    return [{"k1": k1, "b": b, "tf_bound": tf, "identifiers": "split",
             "field_weights": dict(SELECTIVE_FIELD_WEIGHTS), "fb_min_length": NEVER}
            for tf in TF for k1 in K1 for b in B]


def ext_grid() -> list[dict[str, Any]]:
    """Beyond the brief's grid: k1 past its edge, b 1.0, and feedback always on (gap 0)."""
    base = {"tf_bound": "none", "identifiers": "split",
            "field_weights": dict(SELECTIVE_FIELD_WEIGHTS), "fb_min_length": NEVER}
    out = [{**base, "k1": k1, "b": b} for k1 in (2.5, 3.0) for b in [*B, 1.0]]
    out += [{**base, "k1": k1, "b": 1.0} for k1 in (0.9, 1.2, 1.5, 2.0)]
    return out


def label(p: dict[str, Any]) -> str:
    fb = ("fb off" if p.get("fb_min_length") == NEVER else
          "fb always" if p.get("fb_max_gap") == 0 else "fb gated")
    return f"k1 {p['k1']} b {p['b']} tf {p['tf_bound']} {fb}"


def nd(runs: Runs, n: str, k: str) -> float:
    return mean(runs.get(n, k)["ndcg@10"])


def evaluate(runs: Runs, meta: dict[str, dict[str, Any]], k: str) -> dict[str, Any]:
    tuning = [n for n in meta if not meta[n].get("held_out")]
    out: dict[str, Any] = {"per": {}}
    for n in meta:
        if k not in runs.data.get(n, {}):
            return {}
        ref = runs.get(n, key("bm25@2", {}))["ndcg@10"]
        got = runs.get(n, k)["ndcg@10"]
        p = paired_p(got, ref)
        a = not (p < 0.05 and mean(got) < mean(ref))
        b = mean(got) >= peer(runs, n)[1] + 0.01
        out["per"][n] = {"ndcg": mean(got), "p": p, "a": a, "b": b}
    out["n_b"] = sum(out["per"][n]["b"] for n in tuning)
    out["all_a"] = all(out["per"][n]["a"] for n in tuning)
    out["balanced"] = balanced({n: out["per"][n]["ndcg"] for n in tuning}, meta)
    return out


def peer(runs: Runs, n: str) -> tuple[str, float]:
    peers = {k[5:]: mean(v["ndcg@10"]) for k, v in runs.data[n].items() if k.startswith("peer:")}
    best = max(peers, key=peers.__getitem__)
    return best, peers[best]


def ranked(runs: Runs, meta: dict[str, dict[str, Any]], keys: list[str]
           ) -> list[tuple[str, dict[str, Any]]]:
    scored = [(k, evaluate(runs, meta, k)) for k in keys]
    scored = [(k, e) for k, e in scored if e]
    return sorted(scored, key=lambda ke: (-ke[1]["n_b"], -ke[1]["balanced"]))


def run(args: argparse.Namespace) -> None:
    runs = Runs(args.jobs)
    meta = collections()
    # tuning set first, held-out last; baselines and peers before the grid
    order = sorted(meta, key=lambda n: (meta[n].get("held_out", False), n))
    runs.ensure((n, meta[n]["path"], e, {}) for n in order for e in ("bm25@2", "bm25@4"))
    runs.ensure((n, meta[n]["path"], "peers", {}) for n in order)
    if args.stage in ("grid", "all"):
        runs.ensure((n, meta[n]["path"], "bm25@4", p) for p in grid() for n in order)
    if args.stage == "ext":
        run_ext(runs, meta)
    if args.stage in ("fb", "all"):
        keys = [key("bm25@4", p) for p in grid()]
        top = [k for k, _ in ranked(runs, meta, keys)[:3]]
        params = [json.loads(k.split(" ", 1)[1]) for k in top]
        runs.ensure((n, meta[n]["path"], "bm25@4", {**p, **FB_ON})
                    for p in params for n in order)


def run_ext(runs: Runs, meta: dict[str, dict[str, Any]]) -> None:
    order = sorted(meta, key=lambda n: (meta[n].get("held_out", False), n))
    keys = [key("bm25@4", p) for p in grid()]
    top = [json.loads(k.split(" ", 1)[1]) for k, _ in ranked(runs, meta, keys)[:3]]
    wanted = ext_grid() + [{**p, "fb_min_length": 0, "fb_max_gap": 0.0} for p in top]
    runs.ensure((n, meta[n]["path"], "bm25@4", p) for p in wanted for n in order)


def report(args: argparse.Namespace) -> None:
    runs = Runs(1)
    meta = collections()
    tuning = [n for n in meta if not meta[n].get("held_out")]
    order = sorted(meta, key=lambda n: (meta[n].get("held_out", False), meta[n]["genre"], n))
    base = [key("bm25@4", p) for p in grid()]
    fb = [key("bm25@4", {**p, **FB_ON}) for p in grid()]
    keys = [k for k in base + fb if all(k in runs.data.get(n, {}) for n in meta)]
    print(f"configs complete on all {len(meta)} collections: {len(keys)} "
          f"({sum(k in base for k in keys)} fb off, {sum(k in fb for k in keys)} fb gated)")
    rk = ranked(runs, meta, [*keys, key("bm25@4", {}), key("bm25@2", {})])
    print("\ntop 10 by (#collections meeting (b), balanced mean):")
    for k, e in rk[:10]:
        p = json.loads(k.split(" ", 1)[1]) if k.split(" ", 1)[1] != "{}" else None
        name = label(p) if p else k
        fails_b = [n for n in tuning if not e["per"][n]["b"]]
        fails_a = [n for n in tuning if not e["per"][n]["a"]]
        print(f"- {name}: (b) on {e['n_b']}/11, balanced {e['balanced']:.4f}, "
              f"(a) fails {fails_a or 'none'}; (b) fails {fails_b}")
    best_k, best = next((k, e) for k, e in rk if k in keys)
    d2 = evaluate(runs, meta, key("bm25@2", {}))
    d4 = evaluate(runs, meta, key("bm25@4", {}))
    print(f"\nbest config: {label(json.loads(best_k.split(' ', 1)[1]))}")
    print("\n| collection | best peer (which) | peer+0.01 | bm25@2 | bm25@4 default | best config "
          "| oracle (config) | oracle - (peer+0.01) |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    res: dict[str, Any] = {"best": best_k, "collections": {}}
    for n in order:
        pn, pv = peer(runs, n)
        orc = max(keys, key=lambda k: nd(runs, n, k))
        ov = nd(runs, n, orc)
        def mark(e: dict[str, Any], n: str = n) -> str:
            return "" if e["per"][n]["a"] else "*"  # * marks a failed rule (a)
        tag = " (held out)" if meta[n].get("held_out") else ""
        print(f"| {n}{tag} | {pv:.3f} ({pn}) | {pv + 0.01:.3f} | {d2['per'][n]['ndcg']:.3f} | "
              f"{d4['per'][n]['ndcg']:.3f}{' ok' if d4['per'][n]['b'] else ''}{mark(d4)} | "
              f"{best['per'][n]['ndcg']:.3f}{' ok' if best['per'][n]['b'] else ''}{mark(best)} | "
              f"{ov:.3f} ({label(json.loads(orc.split(' ', 1)[1]))}) | {ov - pv - 0.01:+.4f} |")
        peers = {k[5:]: mean(v["ndcg@10"]) for k, v in runs.data[n].items()
                 if k.startswith("peer:")}
        res["collections"][n] = {"peers": peers, "bm25@2": d2["per"][n], "bm25@4": d4["per"][n],
                                 "best": best["per"][n], "oracle": [orc, ov]}
    print("\n('ok' = meets (b); '*' = fails (a))")
    print("\npeers nDCG@10 per collection:")
    for n in order:
        peers = res["collections"][n]["peers"]
        print(f"- {n}: " + ", ".join(f"{k} {v:.3f}" for k, v in sorted(peers.items())))
    res["ranking"] = [[k, e["n_b"], e["balanced"], e["all_a"]] for k, e in rk]
    RESULTS.write_text(json.dumps(res, indent=1, sort_keys=True, default=str))
    ext = [k for k in runs.data[order[0]] if k.startswith("bm25@4 {\"") and k not in keys
           and all(k in runs.data.get(n, {}) for n in meta)]
    if ext:
        print(f"\nextension ({len(ext)} configs beyond the grid): oracle over grid + extension")
        rx = ranked(runs, meta, keys + ext)
        for k, e in rx[:3]:
            print(f"- {label(json.loads(k.split(' ', 1)[1]))}: (b) on {e['n_b']}/11, "
                  f"balanced {e['balanced']:.4f}, all (a) {e['all_a']}")
        for n in order:
            pn, pv = peer(runs, n)
            orc = max(keys + ext, key=lambda k: nd(runs, n, k))
            ov = nd(runs, n, orc)
            print(f"- {n}: {ov:.4f} ({label(json.loads(orc.split(' ', 1)[1]))}) "
                  f"margin {ov - pv - 0.01:+.4f}")
        res["ext_ranking"] = [[k, e["n_b"], e["balanced"], e["all_a"]] for k, e in rx]
    RESULTS.write_text(json.dumps(res, indent=1, sort_keys=True, default=str))
    print(f"\nresults: {RESULTS}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("command", choices=("run", "report"))
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--stage", choices=("grid", "fb", "all", "ext"), default="all")
    args = parser.parse_args()
    run(args) if args.command == "run" else report(args)


if __name__ == "__main__":
    main()
