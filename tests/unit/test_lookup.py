"""The compiled scores of chosen documents equal the numpy lookups', to the unit."""

from __future__ import annotations

import random

import numpy as np
import pytest

from rookhaven.core.analyzer import Analyzer
from rookhaven.core.corpus import Corpus
from rookhaven.core.providers import lookup
from rookhaven.core.providers.bm25 import Bm25Provider
from tests.unit.test_bm25_differential import _corpus

pytestmark = pytest.mark.skipif(lookup._compiled is None, reason="numba is not installed")


@pytest.mark.parametrize("seed", range(6))
def test_compiled_lookups_score_as_the_numpy_ones(seed: int) -> None:
    rng = random.Random(seed)
    index = Bm25Provider(analyzer=Analyzer(stemmer="english"), coverage=rng.choice([0.0, 0.3])
                         ).build(Corpus(_corpus(rng, rng.randint(5, 60))))
    scorer = index.scorer
    vocabulary, one = len(index.index.vocabulary), 1 << scorer.weight_bits
    found = 0
    for _ in range(60):
        # Query terms of one to several lists, weights of one and below, repeated terms.
        plan = [(rng.choice([1, 1, 2, 3]),
                 tuple((rng.randrange(vocabulary), rng.choice([one, one, one // 2, 3, 1]))
                       for _ in range(rng.randint(1, 4))))
                for _ in range(rng.randint(0, 6))]
        ords = np.asarray(rng.sample(range(scorer.n_docs), rng.randint(0, scorer.n_docs)),
                          dtype=np.int64)
        got, want = scorer.score_docs(plan, ords), scorer.score_docs_numpy(plan, ords)
        assert got.dtype == want.dtype and got.tolist() == want.tolist()
        found += int((want > 0).sum())
    assert found > 100  # documents matched: the comparison was not of zeros


def test_the_uncompiled_loops_score_the_same() -> None:
    rng = random.Random(9)
    index = Bm25Provider(analyzer=Analyzer(stemmer="none")).build(Corpus(_corpus(rng, 30)))
    scorer = index.scorer
    plan = [(2, ((0, 1 << scorer.weight_bits), (1, 7))), (1, ((2, 1 << scorer.weight_bits),))]
    ords = np.arange(scorer.n_docs, dtype=np.int64)
    rows = np.array([(scorer.offsets[t], scorer.offsets[t + 1], w) for _, e in plan
                     for t, w in e], dtype=np.int64)
    acc, matched = np.zeros(len(ords), np.int64), np.zeros(len(ords), np.int64)
    lookup._lookup(scorer.docs, scorer.impacts, rows, np.array([0, 2, 3]), np.array([2, 1]),
                   ords, scorer.weight_bits, acc, matched)
    assert scorer.covered(acc, matched, 2).tolist() == scorer.score_docs_numpy(plan, ords).tolist()
