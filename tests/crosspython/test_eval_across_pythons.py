"""Evaluation numbers are the same under the newest other CPython: the default-engine rule
(ADR 0024) is decided from them, and CPython 3.12 changed how the built-in ``sum`` adds
floats, so a mean summed with it differed in its last digits between 3.11 and 3.13."""

from __future__ import annotations

import sys

import pytest

from tests.crosspython.pythons import other_cpython_venv, run_script

# Many judged queries, rankings drawn by a fixed generator: nDCG values whose naive and
# compensated sums differ, then their means per "collection" and over collections.
SCRIPT = """
import random
from rookhaven.evaluation.compare import Cell, _means
from rookhaven.evaluation.metrics import ndcg
rng = random.Random(11)
docs = [f"d{i}" for i in range(60)]
cells = {}
for name in ("a", "b", "c"):
    values = []
    for q in range(400):
        judged = {d: rng.choice((0, 1, 2, 3)) for d in rng.sample(docs, 12)}
        values.append(ndcg(rng.sample(docs, 20), judged, 10))
    cells[name] = {"e": {"ndcg@10": Cell({"ndcg@10": values}, 0).mean("ndcg@10")}}
print(repr(_means(cells, ["a", "b", "c"], ["e"], ["ndcg@10"])), repr(cells))
"""


@pytest.mark.slow
def test_metric_means_are_the_same_bytes_under_another_cpython() -> None:
    assert run_script(other_cpython_venv(), SCRIPT) == run_script(sys.executable, SCRIPT)
