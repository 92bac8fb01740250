"""Run every judged query of a collection through a Retriever and score the rankings."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.engine import Retriever
from ..errors import InputError, shown
from ..models import RetrievalRequest
from .beir import Collection
from .metrics import evaluate_run


@dataclass(frozen=True)
class RunResult:
    """Rankings (id, score) per query, the metrics, and how many queries found nothing."""

    rankings: dict[str, list[tuple[str, float]]]
    metrics: dict[str, float]
    empty_queries: int

    def report(self) -> dict[str, Any]:
        """The JSON report: every metric and ``empty_queries``."""
        return {**self.metrics, "empty_queries": self.empty_queries}


def run_collection(collection: Collection, retriever: Retriever, *, budget: int, seed: str,
                   decompose: bool = True, only: Iterable[str] | None = None) -> RunResult:
    """Retrieve for the judged queries (or the ``only`` ones) and evaluate the rankings."""
    qids = list(collection.queries)
    if only is not None:
        wanted = set(only)
        unknown = sorted(wanted - set(collection.queries))
        if unknown:
            raise InputError(f"the split names queries with no judgements: {unknown[:5]}; "
                             "list only ids from queries.jsonl that appear in the qrels")
        qids = [q for q in qids if q in wanted]
        if not qids:
            raise InputError("the split lists no query id; list one judged query id a line")
    rankings: dict[str, list[tuple[str, float]]] = {}
    for qid in qids:
        if not collection.queries[qid].strip():  # no text: ranks nothing, like no terms
            rankings[qid] = []
            continue
        request = RetrievalRequest(query=collection.queries[qid], recall_budget=budget,
                                   seed=seed, decompose=decompose)
        result = retriever.retrieve(request)
        rankings[qid] = [(h.id, h.score) for h in result.hits]
    run = {q: [d for d, _ in ranked] for q, ranked in rankings.items()}
    metrics = evaluate_run(run, {q: collection.qrels[q] for q in qids})
    empty = sum(1 for ranked in rankings.values() if not ranked)
    return RunResult(rankings=rankings, metrics=metrics, empty_queries=empty)


def check_trec_ids(ids: Iterable[str]) -> None:
    """InputError for the first id a TREC run cannot hold: its columns are split on white
    space, so an id holding any would shift every column after it."""
    for found in ids:
        if any(char.isspace() for char in found):
            raise InputError(f"the id {shown(found)} holds white space, which a TREC run "
                             "cannot hold (its columns are split on it); drop --run-out, or "
                             "give the collection ids without white space")


def write_trec_run(path: Path | str, rankings: Mapping[str, Sequence[tuple[str, float]]],
                   tag: str) -> None:
    """A TREC run file. The score column is the reverse rank, so trec_eval (which re-sorts
    equal scores by document id) keeps Rookhaven's seeded order exactly."""
    check_trec_ids([*rankings, *(doc for ranked in rankings.values() for doc, _ in ranked)])
    lines = []
    for qid, ranked in rankings.items():
        lines += [f"{qid} Q0 {doc} {rank} {len(ranked) - rank + 1} {tag}"
                  for rank, (doc, _) in enumerate(ranked, start=1)]
    try:
        Path(path).write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    except OSError as exc:
        raise InputError(f"{path}: cannot write the run ({exc.strerror})") from None
