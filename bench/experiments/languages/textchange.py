"""A collection ranked as it is and with its text changed: per-query nDCG@10, paired p-value."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import ranking  # noqa: E402

from rookhaven.evaluation import load_collection  # noqa: E402
from rookhaven.evaluation.metrics import ndcg  # noqa: E402
from rookhaven.evaluation.significance import paired_p  # noqa: E402


def compare(path: Path, documents: Callable[[str], str], queries: Callable[[str], str],
            engine: str = "bm25@5") -> tuple[float, float, float]:
    """Mean nDCG@10 of ``engine`` on the collection at ``path`` as it is, and with
    ``documents`` applied to every document's text and fields and ``queries`` to every
    query; then the paired p-value of the two (1 when every query scores alike)."""
    collection = load_collection(path, max_docs=10**7)
    changed = [d.model_copy(update={"text": documents(d.text),
                                    "fields": {k: documents(v) for k, v in d.fields.items()}})
               for d in collection.documents]
    as_is = ranking.build_rookhaven(collection.documents, engine=engine)
    other = ranking.build_rookhaven(changed, engine=engine)
    order = sorted(collection.queries)
    a = [ndcg(as_is(collection.queries[q], 100), collection.qrels.get(q, {}), 10) for q in order]
    b = [ndcg(other(queries(collection.queries[q]), 100), collection.qrels.get(q, {}), 10)
         for q in order]
    return sum(a) / len(a), sum(b) / len(b), 1.0 if a == b else paired_p(a, b)


def report(paths: Iterable[str], changes: Iterable[tuple[str, Callable[[str], str]]],
           engine: str) -> None:
    """For each collection and each (label, change) applied to documents and queries alike,
    print ``engine``'s nDCG@10 as is and changed, with the paired p-value."""
    for path in map(Path, paths):
        for label, change in changes:
            as_is, changed, p = compare(path, change, change, engine)
            print(f"{path.name} ({engine}): {as_is:.4f} as is, {changed:.4f} {label} "
                  f"(p {p:.2g})")
