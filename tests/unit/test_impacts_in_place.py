"""Impacts written over the counts they are computed from equal impacts in an array of their own."""

from __future__ import annotations

import dataclasses
import random

import numpy as np
import pytest

from rookhaven.core.analyzer import Analyzer
from rookhaven.core.corpus import Corpus
from rookhaven.core.index import build_index
from rookhaven.core.providers import impacts
from rookhaven.core.providers.impacts import counts_beside_impacts, fixed_point, idf_table
from rookhaven.core.providers.lowerbound import bounded_impacts
from tests.unit.test_bm25_differential import _corpus


@pytest.mark.parametrize("block", [1, 3, 7, 64, 1 << 18])
@pytest.mark.parametrize("seed", range(4))
def test_impacts_over_their_counts_equal_impacts_beside_them(
        monkeypatch: pytest.MonkeyPatch, block: int, seed: int) -> None:
    # Blocks far smaller than the index make every block but the first overwrite counts
    # that were read by an earlier one: the order fixed_point promises is what is tested.
    monkeypatch.setattr(impacts, "BLOCK", block)
    index = build_index(Corpus(_corpus(random.Random(seed), 40)), Analyzer(stemmer="english"))
    assert index.tfs.dtype == np.uint16
    assert block == 1 << 18 or len(index.docs) > 3 * block
    term_idf = idf_table(index.df(), index.n_docs)
    expected = bounded_impacts(index, 1.2, 0.75, term_idf, "bm25+", 0.5)
    counts = index.tfs.copy()
    moved, room = counts_beside_impacts(index)
    assert np.array_equal(moved.tfs, counts)
    assert np.shares_memory(moved.tfs, room)
    got = bounded_impacts(moved, 1.2, 0.75, term_idf, "bm25+", 0.5, out=room)
    assert got is room
    assert np.array_equal(got, expected)


def test_four_byte_counts_stay_where_they_are() -> None:
    index = build_index(Corpus(_corpus(random.Random(1), 10)), Analyzer(stemmer="none"))
    wide = dataclasses.replace(index, tfs=index.tfs.astype(np.int32))
    moved, room = counts_beside_impacts(wide)
    assert moved is wide and not np.shares_memory(moved.tfs, room)
    term_idf = idf_table(index.df(), index.n_docs)
    part = lambda tf, docs: tf / (tf + 1.0)  # noqa: E731
    assert np.array_equal(fixed_point(moved, term_idf, part, out=room),
                          fixed_point(index, term_idf, part))
