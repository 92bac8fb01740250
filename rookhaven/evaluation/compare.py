"""Several engines on several collections: metrics per cell and paired tests against the first."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..core.engine import Retriever
from .beir import Collection
from .metrics import METRICS, per_query
from .run import run_collection
from .significance import paired_p


@dataclass(frozen=True)
class Cell:
    """One engine on one collection: each metric's value per judged query (sorted ids)."""

    per_query: dict[str, list[float]]
    empty_queries: int

    def mean(self, metric: str) -> float:
        values = self.per_query[metric]
        return math.fsum(values) / len(values) if values else 0.0


def evaluate_cell(collection: Collection, engine: str, params: Mapping[str, Any], *,
                  budget: int, seed: str, decompose: bool) -> Cell:
    """Run ``engine`` with ``params`` over the judged queries of ``collection``."""
    retriever = Retriever(collection.documents, engine, **params)
    result = run_collection(collection, retriever, budget=budget, seed=seed, decompose=decompose)
    values: dict[str, list[float]] = {m: [] for m in METRICS}
    for qid in sorted(collection.qrels):
        ranking = [doc for doc, _ in result.rankings.get(qid, [])]
        for metric, value in per_query(ranking, collection.qrels[qid]).items():
            values[metric].append(value)
    return Cell(per_query=values, empty_queries=result.empty_queries)


def comparison(cells: Mapping[str, Mapping[str, Cell]], engines: Sequence[str],
               metrics: Sequence[str], test: str) -> dict[str, Any]:
    """Per collection and engine each metric's mean, and for every engine after the first its
    difference from the first and the paired test's p-value; plus the mean over collections."""
    out: dict[str, Any] = {"engines": list(engines), "baseline": engines[0], "test": test,
                           "metrics": list(metrics), "collections": {}}
    for name, row in cells.items():
        base = row[engines[0]]
        entry: dict[str, Any] = {}
        for engine in engines:
            cell = row[engine]
            scores: dict[str, Any] = {"queries": len(cell.per_query[metrics[0]]),
                                      "empty_queries": cell.empty_queries}
            for metric in metrics:
                scores[metric] = cell.mean(metric)
                if engine != engines[0]:
                    scores[f"{metric}:delta"] = cell.mean(metric) - base.mean(metric)
                    scores[f"{metric}:p"] = paired_p(cell.per_query[metric],
                                                     base.per_query[metric], test)
            entry[engine] = scores
        out["collections"][name] = entry
    out["mean"] = _means(out["collections"], list(cells), engines, metrics)
    return out


def _means(collections: Mapping[str, Any], names: Sequence[str], engines: Sequence[str],
           metrics: Sequence[str]) -> dict[str, dict[str, float]]:
    return {engine: {m: math.fsum(collections[c][engine][m] for c in names) / len(names)
                     for m in metrics} for engine in engines}


def by_genre(report: Mapping[str, Any], genres: Mapping[str, str]) -> dict[str, Any]:
    """Each genre's mean of every engine and metric over its collections, genres sorted, so a
    regression in one genre cannot hide in the mean of all."""
    names: dict[str, list[str]] = {}
    for name in report["collections"]:
        names.setdefault(genres[name], []).append(name)
    return {genre: {"collections": names[genre],
                    "mean": _means(report["collections"], names[genre], report["engines"],
                                   report["metrics"])}
            for genre in sorted(names)}
