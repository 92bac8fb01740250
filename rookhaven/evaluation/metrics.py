"""Ranking metrics over a run (query -> ranked ids), as trec_eval defines them.

Checked against ir-measures in tests/unit/test_metrics.py. A query with judgements but an
empty ranking scores 0 on every metric (trec_eval would skip it; we do not). Sums are
``math.fsum``, correctly rounded: the built-in ``sum`` of floats changed in CPython 3.12,
and the default-engine rule (ADR 0024) is decided from these numbers on any Python.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

METRICS = ("ndcg@10", "recall@1", "recall@5", "recall@20", "recall@100", "mrr@10",
           "success@1", "success@5", "success@20")


def ndcg(ranking: Sequence[str], judged: Mapping[str, int], k: int) -> float:
    """Normalised DCG at k with linear gains and log2(rank + 1) discounts."""
    dcg = math.fsum(max(judged.get(d, 0), 0) / math.log2(r + 1)
              for r, d in enumerate(ranking[:k], start=1))
    ideal = sorted((g for g in judged.values() if g > 0), reverse=True)[:k]
    best = math.fsum(g / math.log2(r + 1) for r, g in enumerate(ideal, start=1))
    return dcg / best if best > 0 else 0.0


def recall(ranking: Sequence[str], judged: Mapping[str, int], k: int) -> float:
    relevant = {d for d, g in judged.items() if g > 0}
    return len(relevant.intersection(ranking[:k])) / len(relevant) if relevant else 0.0


def reciprocal_rank(ranking: Sequence[str], judged: Mapping[str, int], k: int) -> float:
    for r, d in enumerate(ranking[:k], start=1):
        if judged.get(d, 0) > 0:
            return 1.0 / r
    return 0.0


def success(ranking: Sequence[str], judged: Mapping[str, int], k: int) -> float:
    return 1.0 if any(judged.get(d, 0) > 0 for d in ranking[:k]) else 0.0


_FUNCTIONS = {"ndcg": ndcg, "recall": recall, "mrr": reciprocal_rank, "success": success}


def per_query(ranking: Sequence[str], judged: Mapping[str, int]) -> dict[str, float]:
    """Every metric of METRICS for one query."""
    out = {}
    for name in METRICS:
        kind, k = name.split("@")
        out[name] = _FUNCTIONS[kind](ranking, judged, int(k))
    return out


def evaluate_run(run: Mapping[str, Sequence[str]],
                 qrels: Mapping[str, Mapping[str, int]]) -> dict[str, float]:
    """Mean of every metric over the judged queries of ``qrels`` (missing runs count as 0)."""
    if not qrels:
        return {name: 0.0 for name in METRICS}
    totals = dict.fromkeys(METRICS, 0.0)
    for qid in sorted(qrels):
        for name, value in per_query(run.get(qid, []), qrels[qid]).items():
            totals[name] += value
    return {name: totals[name] / len(qrels) for name in METRICS}
