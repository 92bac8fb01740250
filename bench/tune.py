#!/usr/bin/env python3
"""The tuning set by genre: an engine's parameters chosen leaving a collection or a genre
out, and the table the default rule reads.

    python bench/tune.py table [--jobs 2]     # every collection: bm25@2/3/4, best peer, p
    python bench/tune.py folds [--jobs 2]     # bm25@4: leave-one-collection-out and -genre-out
    python bench/tune.py hybrid [--jobs 2]    # hybrid@1's fusion: grid, genre folds, table

Collections: every directory of ``bench/collections`` with a ``meta.json`` (its genre,
query style, source and licence), and the four of ``../shared/datasets`` (their metadata in
``bench/collections/shared.json``). Sets marked ``held_out`` are never used to choose a
parameter; they are reported beside the others. Every run is cached by (collection, engine,
parameters) in ``bench/data/tune-cache.json`` as per-query metrics, so a re-run computes
only what is new. Peers get the same tokens as bm25@4 (``bench/peers.py``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Iterable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from peers import same_tokens  # noqa: E402

from rookhaven import Retriever  # noqa: E402
from rookhaven.core.engines import make_provider  # noqa: E402
from rookhaven.evaluation import load_collection, run_collection  # noqa: E402
from rookhaven.evaluation.metrics import per_query  # noqa: E402
from rookhaven.evaluation.significance import paired_p  # noqa: E402

COLLECTIONS = ROOT / "bench" / "collections"
SHARED = ROOT.parent / "shared" / "datasets"
CACHE = ROOT / "bench" / "data" / "tune-cache.json"
METRICS = ("ndcg@10", "recall@100", "mrr@10")
NEVER = 1 << 20  # fb_min_length that no collection reaches: feedback never runs

# Stage 1, analysis and fields (no feedback); stage 2, the predictor's gap on top.
FIELDS = [{"identifiers": i, "tf_bound": tf, "field_weights": {
              "title": t, "name": t, "keywords": 1.5, "parameters": 1.0, "text": 1.0}}
          for tf in ("bm25+", "none") for i in ("none", "split") for t in (2.0, 3.0)]
GAPS = [0.0, 1.25, 1.5, 2.0]
MIN_LENGTHS = [0, 16, 24, 32, 48, 64, NEVER]


def collections() -> dict[str, dict[str, Any]]:
    """name -> metadata with ``path``, every collection of the tuning set and the held-out."""
    found: dict[str, dict[str, Any]] = {}
    shared = json.loads((COLLECTIONS / "shared.json").read_text())
    for name, meta in shared.items():
        if (SHARED / name).is_dir():
            found[name] = {**meta, "path": str(SHARED / name)}
    for meta_file in sorted(COLLECTIONS.glob("*/meta.json")):
        meta = json.loads(meta_file.read_text())
        found[meta_file.parent.name] = {**meta, "path": str(meta_file.parent)}
    return found


def key(engine: str, params: dict[str, Any]) -> str:
    return engine + " " + json.dumps(params, sort_keys=True)


def _evaluate(path: str, engine: str, params: dict[str, Any]) -> dict[str, Any]:
    """Per-query metrics (sorted query ids) of one engine, or of every peer (engine "peers")."""
    collection = load_collection(path, max_docs=10**7)
    qids = sorted(collection.qrels)
    start = time.perf_counter()
    out: dict[str, Any] = {}
    if engine == "hybrid-grid":
        out.update(_hybrid_grid(collection, qids, params["grid"]))
    elif engine == "float-hybrid":
        out.update(_float_hybrid(collection, qids, params["grid"]))
    elif engine == "peers":
        analyzer = make_provider("bm25@4", **params).analyzer
        for name, search in same_tokens(collection.documents, analyzer.terms).items():
            rankings = {q: search(collection.queries[q], 100) for q in qids}
            out[f"peer:{name}"] = _per_query(rankings, collection.qrels, qids)
    else:
        retriever = Retriever(collection.documents, engine, **params)
        result = run_collection(collection, retriever, budget=100, seed="rookhaven-default")
        rankings = {q: [d for d, _ in result.rankings.get(q, [])] for q in qids}
        out[key(engine, params)] = _per_query(rankings, collection.qrels, qids)
        mean = getattr(retriever.index, "mean_length16", None)
        if mean is not None:
            out[key(engine, params)]["mean_length16"] = mean
        out[key(engine, params)]["skipped"] = _skipped(retriever)
    print(f"{Path(path).name} {engine} {json.dumps(params, sort_keys=True)}: "
          f"{time.perf_counter() - start:.1f} s", file=sys.stderr)
    return out


def _hybrid_grid(collection: Any, qids: list[str], grid: list[dict[str, Any]]
                 ) -> dict[str, Any]:
    """hybrid@1 with each fusion setting of ``grid``, from one build: the fusion parameters
    change neither the lexical index nor the vectors, so only the index's fields move (the
    bytes are those of a Retriever built with the parameters, which ``table`` runs)."""
    import dataclasses
    retriever = Retriever(collection.documents, "hybrid@1")
    built = retriever.index
    out = {}
    for params in grid:
        provider = make_provider("hybrid@1", **params)
        f = provider.config()["fusion"]
        retriever.index = dataclasses.replace(
            built, k=f["k"], lexical_weight=f["lexical_weight"],
            semantic_weight=f["semantic_weight"], lexical_depth=f["lexical_depth"],
            semantic_depth=f["semantic_depth"], confident_coverage=f["confident_coverage"],
            confident_weight=f["confident_semantic_weight"])
        retriever._parts = retriever.index
        retriever._for_texts = retriever.index.for_texts
        result = run_collection(collection, retriever, budget=100, seed="rookhaven-default")
        rankings = {q: [d for d, _ in result.rankings.get(q, [])] for q in qids}
        out[key("hybrid@1", params)] = _per_query(rankings, collection.qrels, qids)
    return out


def _float_hybrid(collection: Any, qids: list[str], grid: list[dict[str, Any]]
                  ) -> dict[str, Any]:
    """The float prototype (``bench/float_hybrid.py``) fused with bm25@6's ranking."""
    from float_hybrid import FloatModel, fused, semantic_rankings
    lexical = run_collection(collection, Retriever(collection.documents, "bm25@6"),
                             budget=100, seed="rookhaven-default")
    semantic = semantic_rankings(FloatModel(), collection.documents,
                                 {q: collection.queries[q] for q in qids})
    out = {}
    for params in grid:
        rankings = {q: fused([d for d, _ in lexical.rankings.get(q, [])], semantic[q],
                             params["semantic_weight"], params["rrf_k"])[:100] for q in qids}
        out[key("float-hybrid", params)] = _per_query(rankings, collection.qrels, qids)
    return out


def _skipped(retriever: Retriever) -> float | None:
    """The share of whole queries whose feedback the predictor skipped (bm25@4), else None."""
    memo = getattr(retriever.index, "_feedback", None)
    if memo is None or not memo:
        return None
    decisions = [fb.decision for fb in memo.values() if fb.decision is not None]
    if not decisions:
        return None
    return sum(1 for d in decisions if not d["run"]) / len(decisions)


def _per_query(rankings: dict[str, list[str]], qrels: dict[str, dict[str, int]],
               qids: list[str]) -> dict[str, Any]:
    values: dict[str, Any] = {m: [] for m in METRICS}
    for q in qids:
        scores = per_query(rankings.get(q, []), qrels[q])
        for m in METRICS:
            values[m].append(scores[m])
    return values


class Runs:
    """The cache of per-query metrics, filled in parallel where runs are missing."""

    def __init__(self, jobs: int) -> None:
        self.data: dict[str, dict[str, Any]] = (
            json.loads(CACHE.read_text()) if CACHE.exists() else {})
        self.jobs = jobs

    def ensure(self, wanted: Iterable[tuple[str, str, str, dict[str, Any]]]) -> None:
        """Compute every (collection name, path, engine, params) not cached yet."""
        todo, seen = [], set()
        for name, path, engine, params in wanted:
            # A grid is cached under its last setting's key.
            k = ("peer:bm25s" if engine == "peers" else
                 key("hybrid@1", params["grid"][-1]) if engine == "hybrid-grid" else
                 key(engine, params["grid"][-1]) if engine == "float-hybrid" else
                 key(engine, params))
            if k not in self.data.get(name, {}) and (name, k) not in seen:
                seen.add((name, k))
                todo.append((name, path, engine, params))
        if not todo:
            return
        with ProcessPoolExecutor(max_workers=self.jobs) as pool:
            futures = [(name, pool.submit(_evaluate, path, engine, params))
                       for name, path, engine, params in todo]
            for name, future in futures:
                self.data.setdefault(name, {}).update(future.result())
                CACHE.parent.mkdir(parents=True, exist_ok=True)
                CACHE.write_text(json.dumps(self.data, sort_keys=True))

    def get(self, name: str, k: str) -> dict[str, Any]:
        return self.data[name][k]


def mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def gated(runs: Runs, name: str, base: dict[str, Any], gap: float, min_length: int
          ) -> dict[str, Any]:
    """bm25@4 with ``base`` and the predictor (gap, min_length), from the cached runs: below
    ``min_length`` the collection is never expanded, so its run is the no-feedback one."""
    off = runs.get(name, key("bm25@4", {**base, "fb_min_length": NEVER}))
    on = runs.get(name, key("bm25@4", {**base, "fb_min_length": 0, "fb_max_gap": gap}))
    return off if on["mean_length16"] < min_length * 16 else on


def balanced(scores: dict[str, float], meta: dict[str, dict[str, Any]]) -> float:
    """The mean over genres of each genre's mean: seven ad hoc sets do not outvote two."""
    genres: dict[str, list[float]] = {}
    for name, value in scores.items():
        genres.setdefault(meta[name]["genre"], []).append(value)
    return mean([mean(v) for v in genres.values()])


def folds(runs: Runs, meta: dict[str, dict[str, Any]]) -> None:
    tuning = [n for n in meta if not meta[n].get("held_out")]
    runs.ensure((n, meta[n]["path"], "bm25@4", {**f, "fb_min_length": NEVER})
                for n in meta for f in FIELDS)
    runs.ensure((n, meta[n]["path"], "bm25@2", {}) for n in meta)

    def stage1(train: list[str]) -> dict[str, Any]:
        def score(f: dict[str, Any]) -> float:
            return balanced({n: mean(runs.get(n, key("bm25@4", {**f, "fb_min_length": NEVER}))
                                     ["ndcg@10"]) for n in train}, meta)
        return max(FIELDS, key=lambda f: (round(score(f), 6), -FIELDS.index(f)))

    picks1 = {f"collection {n}": stage1([t for t in tuning if t != n]) for n in tuning}
    genres = sorted({meta[n]["genre"] for n in tuning})
    picks1.update({f"genre {g}": stage1([t for t in tuning if meta[t]["genre"] != g])
                   for g in genres})
    picks1["all"] = stage1(tuning)
    bases = {json.dumps(p, sort_keys=True): p for p in picks1.values()}
    runs.ensure((n, meta[n]["path"], "bm25@4", {**b, "fb_min_length": 0, "fb_max_gap": g})
                for n in meta for b in bases.values() for g in GAPS)

    def stage2(train: list[str], base: dict[str, Any]) -> tuple[float, int]:
        def score(choice: tuple[float, int]) -> float:
            return balanced({n: mean(gated(runs, n, base, *choice)["ndcg@10"])
                             for n in train}, meta)
        grid = [(g, m) for g in GAPS for m in MIN_LENGTHS]
        return max(grid, key=lambda c: (round(score(c), 6), -grid.index(c)))

    print("| fold | left out | tf, identifiers, title weight | gap, min length | nDCG@10 | "
          "bm25@2 |")
    print("|---|---|---|---|---:|---:|")
    for fold, base in picks1.items():
        if fold == "all":
            continue
        kind, _, out = fold.partition(" ")
        held = [out] if kind == "collection" else [t for t in tuning if meta[t]["genre"] == out]
        train = [t for t in tuning if t not in held]
        gap, min_length = stage2(train, base)
        for n in held:
            got = mean(gated(runs, n, base, gap, min_length)["ndcg@10"])
            ref = mean(runs.get(n, key("bm25@2", {}))["ndcg@10"])
            print(f"| {kind} | {n} | {base['tf_bound']}, {base['identifiers']}, "
                  f"{base['field_weights']['title']} | "
                  f"{gap}, {min_length} | {got:.3f} | {ref:.3f} |")
    gap, min_length = stage2(tuning, picks1["all"])
    print("\nchosen on the whole tuning set:", json.dumps(
        {**picks1["all"], "fb_max_gap": gap, "fb_min_length": min_length}, sort_keys=True))
    print("mean lengths (1/16 tokens):", {n: runs.get(n, key("bm25@4", {
        **picks1["all"], "fb_min_length": 0, "fb_max_gap": gap}))["mean_length16"]
        for n in meta})


def table(runs: Runs, meta: dict[str, dict[str, Any]], engines: list[str]) -> None:
    runs.ensure((n, meta[n]["path"], e, {}) for n in meta for e in engines)
    runs.ensure((n, meta[n]["path"], "peers", {}) for n in meta)
    base = engines[0]
    heads = [f"{e} {m}" for m in METRICS for e in engines]
    print("| genre | collection | queries | " + " | ".join(heads) +
          " | best peer nDCG@10 | " + " | ".join(f"p {e} nDCG@10" for e in engines[1:]) +
          " | skipped |")
    print("|---|---|---:|" + "---:|" * (len(heads) + len(engines)))
    order = sorted(meta, key=lambda n: (meta[n].get("held_out", False), meta[n]["genre"], n))
    by_genre: dict[str, dict[str, list[float]]] = {}
    for n in order:
        cells = {e: runs.get(n, key(e, {})) for e in engines}
        peers = {k[5:]: mean(v["ndcg@10"]) for k, v in runs.data[n].items()
                 if k.startswith("peer:")}
        best = max(peers, key=peers.__getitem__)
        values = [f"{mean(cells[e][m]):.3f}" for m in METRICS for e in engines]
        ps = [f"{paired_p(cells[e]['ndcg@10'], cells[base]['ndcg@10']):.3g}"
              for e in engines[1:]]
        skipped = cells[engines[-1]].get("skipped")
        genre = meta[n]["genre"] + (" (held out)" if meta[n].get("held_out") else "")
        print(f"| {genre} | {n} | {len(cells[base]['ndcg@10'])} | " + " | ".join(values) +
              f" | {peers[best]:.3f} ({best}) | " + " | ".join(ps) +
              f" | {'' if skipped is None else f'{skipped:.0%}'} |")
        row = by_genre.setdefault(genre, {})
        for e in engines:
            row.setdefault(e, []).append(mean(cells[e]["ndcg@10"]))
        row.setdefault("peer", []).append(peers[best])
    print("\nnDCG@10 by genre (mean of collections):")
    for genre, row in by_genre.items():
        print(f"- {genre}: " + ", ".join(f"{e} {mean(v):.3f}" for e, v in row.items()))


# hybrid@1's fusion grid: the semantic list's weight (the lexical one's is 1 - w), k, and the
# weight the semantic list keeps when the lexical list is sure (a rank-1 document matches at
# least that share of the query's distinct terms).
WEIGHTS = [0.1, 0.15, 0.2, 0.3, 0.4, 0.5]
HYBRID_GRID = (
    [{"semantic_weight": w, "lexical_weight": round(1 - w, 4), "rrf_k": k}
     for k in (20, 60) for w in WEIGHTS]
    + [{"semantic_weight": w, "lexical_weight": round(1 - w, 4), "rrf_k": 20,
        "confident_coverage": c, "confident_semantic_weight": cw}
       for w in (0.2, 0.3, 0.4, 0.5) for c in (0.75, 1.0) for cw in (0.0, 0.1)])
FLOAT_GRID = [{"semantic_weight": w, "rrf_k": k} for k in (20, 60) for w in WEIGHTS]


def hybrid(runs: Runs, meta: dict[str, dict[str, Any]]) -> None:
    """The grid on every collection, each genre's pick from the other genres, the table."""
    runs.ensure((n, meta[n]["path"], "hybrid-grid", {"grid": HYBRID_GRID}) for n in meta)
    runs.ensure((n, meta[n]["path"], "float-hybrid", {"grid": FLOAT_GRID}) for n in meta)
    runs.ensure((n, meta[n]["path"], "bm25@6", {}) for n in meta)
    runs.ensure((n, meta[n]["path"], "peers", {}) for n in meta)
    tuning = [n for n in meta if not meta[n].get("held_out")]

    def ndcg(n: str, params: dict[str, Any], engine: str = "hybrid@1") -> float:
        return mean(runs.get(n, key(engine, params))["ndcg@10"])

    def pick(train: list[str]) -> dict[str, Any]:
        return max(HYBRID_GRID, key=lambda p: (
            round(balanced({n: ndcg(n, p) for n in train}, meta), 6),
            -HYBRID_GRID.index(p)))

    print("### Grid (nDCG@10; genre-balanced mean of the tuning set)\n")
    print("| setting | " + " | ".join(tuning) + " | balanced |")
    print("|---|" + "---:|" * (len(tuning) + 1))
    for p in HYBRID_GRID:
        cells = {n: ndcg(n, p) for n in tuning}
        print(f"| {json.dumps(p, sort_keys=True)} | " + " | ".join(
            f"{cells[n]:.3f}" for n in tuning) + f" | {balanced(cells, meta):.4f} |")
    print("\n### Leave one genre out\n")
    print("| left out | chosen on the other genres | collection | nDCG@10 | bm25@6 |")
    print("|---|---|---|---:|---:|")
    for genre in sorted({meta[n]["genre"] for n in tuning}):
        train = [n for n in tuning if meta[n]["genre"] != genre]
        chosen = pick(train)
        for n in (t for t in tuning if meta[t]["genre"] == genre):
            print(f"| {genre} | {json.dumps(chosen, sort_keys=True)} | {n} | "
                  f"{ndcg(n, chosen):.3f} | {ndcg(n, {}, 'bm25@6'):.3f} |")
    print("\nchosen on the whole tuning set:", json.dumps(pick(tuning), sort_keys=True))
    hybrid_table(runs, meta)


def hybrid_table(runs: Runs, meta: dict[str, dict[str, Any]]) -> None:
    """hybrid@1 as built (its defaults) against bm25@6, the float prototype at the same
    weight and k, and every peer; paired t-tests against bm25@6; the default rule."""
    runs.ensure((n, meta[n]["path"], e, {}) for n in meta for e in ("bm25@6", "hybrid@1"))
    defaults = make_provider("hybrid@1").config()["fusion"]
    prototype = key("float-hybrid", {"rrf_k": defaults["k"], "semantic_weight": round(
        defaults["semantic_weight"] / 256, 1)})
    print("\n### hybrid@1 (its defaults) against bm25@6, the float prototype and the peers\n")
    print("| genre | collection | queries | bm25@6 nDCG@10 | hybrid@1 | float prototype | "
          "best peer | p nDCG@10 | bm25@6 R@100 | hybrid@1 R@100 | p R@100 | "
          "bm25@6 MRR@10 | hybrid@1 MRR@10 | p MRR@10 |")
    print("|---|---|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|")
    order = sorted(meta, key=lambda n: (meta[n].get("held_out", False), meta[n]["genre"], n))
    genres: dict[str, dict[str, list[float]]] = {}
    worse = []
    for n in order:
        base, hyb = runs.get(n, key("bm25@6", {})), runs.get(n, key("hybrid@1", {}))
        proto = runs.data[n].get(prototype)
        peers = {k[5:]: mean(v["ndcg@10"]) for k, v in runs.data[n].items()
                 if k.startswith("peer:")}
        best = max(peers, key=peers.__getitem__)
        p = {m: paired_p(hyb[m], base[m]) for m in METRICS}
        if mean(hyb["ndcg@10"]) < mean(base["ndcg@10"]) and p["ndcg@10"] < 0.05:
            worse.append(n)
        genre = meta[n]["genre"] + (" (held out)" if meta[n].get("held_out") else "")
        shown = "" if proto is None else f"{mean(proto['ndcg@10']):.3f}"
        print(f"| {genre} | {n} | {len(base['ndcg@10'])} | {mean(base['ndcg@10']):.3f} | "
              f"{mean(hyb['ndcg@10']):.3f} | {shown} | "
              f"{peers[best]:.3f} ({best}) | {p['ndcg@10']:.3g} | "
              f"{mean(base['recall@100']):.3f} | {mean(hyb['recall@100']):.3f} | "
              f"{p['recall@100']:.3g} | {mean(base['mrr@10']):.3f} | "
              f"{mean(hyb['mrr@10']):.3f} | {p['mrr@10']:.3g} |")
        row = genres.setdefault(genre, {})
        for name, value in (("bm25@6", mean(base["ndcg@10"])),
                            ("hybrid@1", mean(hyb["ndcg@10"])), ("best peer", peers[best])):
            row.setdefault(name, []).append(value)
    print("\nnDCG@10 by genre (mean of collections):\n")
    print("| genre | bm25@6 | hybrid@1 | best peer | hybrid@1 - (best peer + 0.01) |")
    print("|---|---:|---:|---:|---:|")
    failing = []
    for genre, row in genres.items():
        margin = mean(row["hybrid@1"]) - mean(row["best peer"]) - 0.01
        if "held out" not in genre and margin < 0:
            failing.append(genre)
        print(f"| {genre} | {mean(row['bm25@6']):.3f} | {mean(row['hybrid@1']):.3f} | "
              f"{mean(row['best peer']):.3f} | {margin:+.3f} |")
    print("\nthe default rule on the tuning set: significantly worse than bm25@6 on "
          f"{[n for n in worse if not meta[n].get('held_out')] or 'none'}; genres below the "
          f"best peer + 0.01: {failing or 'none'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=("table", "folds", "hybrid"))
    parser.add_argument("--engines", default="bm25@2,bm25@3,bm25@4")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    runs = Runs(args.jobs)
    meta = collections()
    if args.command == "table":
        table(runs, meta, args.engines.split(","))
    elif args.command == "hybrid":
        hybrid(runs, meta)
    else:
        folds(runs, meta)


if __name__ == "__main__":
    main()
