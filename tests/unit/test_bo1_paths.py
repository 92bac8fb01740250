"""Bo1's compiled term choice against its numpy reference: the same ids and integer weights."""

from __future__ import annotations

import dataclasses
import random

import numpy as np
import numpy.typing as npt
import pytest

from rookhaven.core.index import InvertedIndex
from rookhaven.core.providers import feedback
from rookhaven.core.providers.feedback import (
    ForwardIndex,
    bo1_reference,
    bo1_tables,
    rm3_weights,
)

pytestmark = pytest.mark.skipif(feedback._bo1_kernel is None, reason="numba is not installed")


def _forward(rng: random.Random, n_docs: int, vocab: int, dtype: type = np.int32) -> ForwardIndex:
    offsets, terms, tfs = [0], [], []
    for _ in range(n_docs):
        ids = sorted(rng.sample(range(vocab), rng.randint(0, min(vocab, 40))))
        terms += ids
        # Few distinct counts (1/16 units): equal weights, so ties on the cut are common.
        tfs += [rng.choice((16, 16, 32, 48, 8, 24, rng.randint(1, 4000))) for _ in ids]
        offsets.append(len(terms))
    return ForwardIndex(offsets=np.asarray(offsets, dtype=np.int64),
                        terms=np.asarray(terms, dtype=np.int32),
                        tfs=np.asarray(tfs, dtype=dtype))


def _tables(rng: random.Random, vocab: int, n_docs: int,
            decimal_logs: bool) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    if decimal_logs:  # as the index builds them, with repeated collection frequencies
        cf = np.asarray([rng.choice((16, 32, rng.randint(1, 16 * n_docs))) for _ in range(vocab)],
                        dtype=np.int64)
        return bo1_tables(cf, n_docs)
    # Arbitrary doubles: products whose floors sit near an integer boundary get exercised.
    slope = np.asarray([rng.uniform(0, 24) for _ in range(vocab)])
    floor = np.asarray([rng.choice((0.0, rng.uniform(0, 1e-3), rng.random()))
                        for _ in range(vocab)])
    return slope, floor


@pytest.mark.parametrize("dtype", [np.uint16, np.int32])
@pytest.mark.parametrize("decimal_logs", [True, False])
def test_compiled_bo1_chooses_what_the_reference_chooses(decimal_logs: bool, dtype: type) -> None:
    rng = random.Random(18 + decimal_logs)
    compared = 0
    for _ in range(400):
        n_docs, vocab = rng.randint(1, 60), rng.randint(1, 300)
        forward = _forward(rng, n_docs, vocab, dtype)
        eligible = np.asarray([rng.random() < 0.8 for _ in range(vocab)], dtype=bool)
        tables = _tables(rng, vocab, n_docs, decimal_logs)
        docs = rng.sample(range(n_docs), rng.randint(0, min(n_docs, 12)))
        fb_terms = rng.choice((1, 3, 10, 20, 100))
        expected = bo1_reference(forward, eligible, tables, docs, fb_terms)
        got = feedback.bo1_weights(forward, eligible, tables, docs, fb_terms)
        assert list(got.items()) == list(expected.items())
        compared += len(expected) > 0
    assert compared > 300  # most cases chose terms: the comparison was not vacuous


def test_the_uncompiled_loops_choose_the_same() -> None:
    rng = random.Random(7)
    for _ in range(40):
        forward = _forward(rng, 20, 60)
        eligible = np.ones(60, dtype=bool)
        slope, floor = _tables(rng, 60, 20, False)
        docs = rng.sample(range(20), 10)
        expected = bo1_reference(forward, eligible, (slope, floor), docs, 10)
        assert len(expected) == 10
        # Whole counts below 256 (every field weight 1.0), as 1/16 units.
        sixteenths = dataclasses.replace(forward, tfs=np.minimum(forward.tfs, 255) * 16)
        for stored, want in ((forward, expected),
                             (_shifted(sixteenths), bo1_reference(sixteenths, eligible,
                                                                  (slope, floor), docs, 10))):
            ids, units = feedback._bo1_choose(
                stored.offsets, stored.terms, stored.tfs, eligible, slope, floor,
                np.asarray(docs, dtype=np.int64), 10, float(16 >> stored.shift))
            assert dict(zip(ids.tolist(), units.tolist(), strict=True)) == want


def _shifted(forward: ForwardIndex) -> ForwardIndex:
    """``forward`` with its counts (multiples of 16, below 4096) stored as one byte each."""
    assert not (forward.tfs % 16).any() and forward.tfs.max(initial=0) < 4096
    return dataclasses.replace(forward, tfs=(forward.tfs >> 4).astype(np.uint8), shift=4)


def test_ties_go_to_the_lower_term_id() -> None:
    forward = ForwardIndex(offsets=np.asarray([0, 4], dtype=np.int64),
                           terms=np.asarray([1, 2, 5, 9], dtype=np.int32),
                           tfs=np.asarray([16, 16, 16, 32], dtype=np.int32))
    slope, floor = np.full(10, 2.0), np.zeros(10)
    assert feedback.bo1_weights(forward, np.ones(10, dtype=bool), (slope, floor), [0], 2) == {
        9: 4 << 20, 1: 2 << 20}


def test_narrow_counts_choose_what_int64_counts_chose() -> None:
    """The forward index keeps the inverted index's uint16/int32 counts (it held int64)."""
    rng = random.Random(3)
    for _ in range(100):
        wide = _forward(rng, 30, 80, np.int64)
        eligible = np.asarray([rng.random() < 0.8 for _ in range(80)], dtype=bool)
        tables = _tables(rng, 80, 30, True)
        docs = rng.sample(range(30), 10)
        scores = [rng.randint(1, 1 << 40) for _ in docs]
        for dtype in (np.uint16, np.int32):
            narrow = dataclasses.replace(wide, tfs=wide.tfs.astype(dtype))
            assert rm3_weights(narrow, eligible, docs, scores, 10) == rm3_weights(
                wide, eligible, docs, scores, 10)
            assert feedback.bo1_weights(narrow, eligible, tables, docs, 10) == bo1_reference(
                wide, eligible, tables, docs, 10)
        # Whole counts only (every field weight 1.0): one byte each, shifted by four bits.
        whole = dataclasses.replace(wide, tfs=np.minimum(wide.tfs, 255) << 4)
        byte = _shifted(whole)
        assert rm3_weights(byte, eligible, docs, scores, 10) == rm3_weights(
            whole, eligible, docs, scores, 10)
        assert feedback.bo1_weights(byte, eligible, tables, docs, 10) == bo1_reference(
            whole, eligible, tables, docs, 10)


def _inverted(rng: random.Random, n_docs: int, vocab: int, dtype: type,
              unit: int = 1, most: int = 4000) -> InvertedIndex:
    """Random postings (documents ascending per term; some documents and terms empty) with
    counts ``unit`` times 1 to ``most``, ``most`` among them."""
    offsets, docs, tfs = [0], [], []
    for _ in range(vocab):
        members = sorted(rng.sample(range(n_docs), rng.randint(0, min(n_docs, 30))))
        docs += members
        tfs += [unit * rng.randint(1, most) for _ in members]
        offsets.append(len(docs))
    if tfs:  # the largest count occurs, so the stored form is the one its bound implies
        tfs[rng.randrange(len(tfs))] = unit * most
    return InvertedIndex(vocabulary=tuple(f"t{i}" for i in range(vocab)),
                         offsets=np.asarray(offsets, dtype=np.int64),
                         docs=np.asarray(docs, dtype=np.int32),
                         tfs=np.asarray(tfs, dtype=dtype),
                         lengths=np.zeros(n_docs, dtype=np.int64))


# (unit, most, stored type, shift): counts of 1/16 (weights other than 1.0) stay as they
# are; whole counts take a byte while they fit one; a common factor of 8 shifts by three,
# one of 32 by four at most (a stored unit is never coarser than a whole count).
COUNT_FORMS = [(1, 4000, None, 0), (16, 255, np.uint8, 4), (16, 256, None, 0),
               (8, 255, np.uint8, 3), (32, 127, np.uint8, 4), (32, 128, None, 0)]


@pytest.mark.parametrize(("unit", "most", "stored", "shift"), COUNT_FORMS)
@pytest.mark.parametrize("dtype", [np.uint16, np.int32])
def test_the_compiled_transposition_is_the_stable_sort(dtype: type, unit: int, most: int,
                                                       stored: type | None, shift: int) -> None:
    rng = random.Random(7)
    checked = 0
    for _ in range(200):
        index = _inverted(rng, rng.randint(1, 80), rng.randint(1, 60), dtype, unit, most)
        keep = np.asarray([rng.random() < 0.6 for _ in index.vocabulary], dtype=bool)
        for mask in (None, keep):
            got = feedback.forward_index(index, mask)
            want = feedback.forward_reference(index, mask)
            for a, b in ((got.offsets, want.offsets), (got.terms, want.terms),
                         (got.tfs, want.tfs)):
                assert a.dtype == b.dtype and a.tolist() == b.tolist()
            assert got.shift == want.shift
            if mask is None and len(index.tfs):  # the largest count, unit * most, is kept
                assert (got.tfs.dtype, got.shift) == (stored or dtype, shift)
                checked += 1
            wide = dataclasses.replace(want, tfs=want.tfs.astype(np.int64) << want.shift,
                                       shift=0)
            for ordinal in range(index.n_docs):  # read back in 1/16 units, whatever is stored
                assert [v.tolist() for v in got.vector(ordinal)] == \
                    [v.tolist() for v in wide.vector(ordinal)]
        kept = feedback.forward_index(index, keep)
        assert set(kept.terms.tolist()) <= set(np.flatnonzero(keep).tolist())
    assert checked > 20  # the expected form was checked, not only the agreement


def test_term_ids_are_two_bytes_only_while_the_vocabulary_fits() -> None:
    for vocab, dtype in ((1 << 16, np.uint16), ((1 << 16) + 1, np.int32)):
        offsets = np.zeros(vocab + 1, dtype=np.int64)
        offsets[-2:] = [0, 2]  # only the last term has postings: the largest id
        index = InvertedIndex(vocabulary=tuple(f"t{i}" for i in range(vocab)),
                              offsets=offsets, docs=np.asarray([0, 2], dtype=np.int32),
                              tfs=np.asarray([16, 32], dtype=np.uint16),
                              lengths=np.zeros(3, dtype=np.int64))
        for forward in (feedback.forward_index(index), feedback.forward_reference(index)):
            assert forward.terms.dtype == dtype
            assert forward.terms.tolist() == [vocab - 1, vocab - 1]
            assert forward.offsets.tolist() == [0, 1, 1, 2]


def test_feedback_from_the_eligible_terms_alone_chooses_as_from_all() -> None:
    """bm25@3 transposes only eligible terms: both methods read nothing else, so the
    weights must be those of the whole transposition, whatever the mask."""
    rng = random.Random(11)
    for _ in range(100):
        n_docs, vocab = rng.randint(1, 60), rng.randint(1, 50)
        index = _inverted(rng, n_docs, vocab, np.int32)
        eligible = np.asarray([rng.random() < 0.7 for _ in range(vocab)], dtype=bool)
        whole, lean = feedback.forward_index(index), feedback.forward_index(index, eligible)
        assert len(lean.terms) <= len(whole.terms)
        cf = feedback.collection_frequencies(index)
        tables = feedback.bo1_tables(cf, n_docs)
        docs = rng.sample(range(n_docs), min(n_docs, rng.randint(1, 10)))
        scores = [rng.randint(1, 1 << 40) for _ in docs]
        for fb_terms in (1, 3, 10):
            assert rm3_weights(lean, eligible, docs, scores, fb_terms) == rm3_weights(
                whole, eligible, docs, scores, fb_terms)
            assert feedback.bo1_weights(lean, eligible, tables, docs, fb_terms) == \
                bo1_reference(whole, eligible, tables, docs, fb_terms)


def test_collection_frequencies_are_each_terms_summed_counts_across_blocks(
        monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(3)
    monkeypatch.setattr(feedback, "BLOCK", 7)  # lists cut across many blocks
    for dtype in (np.uint16, np.int32):
        for _ in range(50):
            index = _inverted(rng, rng.randint(1, 80), rng.randint(1, 60), dtype)
            want = [int(index.tfs[index.offsets[t]:index.offsets[t + 1]].astype(np.int64).sum())
                    for t in range(len(index.vocabulary))]
            got = feedback.collection_frequencies(index)
            assert got.dtype == np.int64 and got.tolist() == want
