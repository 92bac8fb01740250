"""The kernel's two paths (pruned MaxScore, exhaustive per window) against full scoring."""

from __future__ import annotations

import importlib.util
import random
import types
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from rookhaven import Document
from rookhaven.core import compiled
from rookhaven.core.corpus import Corpus
from rookhaven.core.providers import kernel
from rookhaven.core.providers.bm25 import Bm25Provider
from rookhaven.core.providers.bm25prf import Bm25PrfIndex, Bm25PrfProvider
from rookhaven.core.providers.scoring import Bm25Scorer, Plan

pytestmark = pytest.mark.skipif(not kernel.AVAILABLE, reason="numba is not installed")

VOCAB = [f"w{i}" for i in range(50)] + ["wide", "widen", "widening", "wider"]


def _corpus(seed: int, n: int = 600) -> Corpus:
    rng = random.Random(seed)
    docs = [Document(id=f"d{i:04d}", text=" ".join(
        rng.choice(VOCAB[: rng.randint(3, len(VOCAB))]) for _ in range(rng.randint(1, 25))))
        for i in range(n)]
    # Copies of a few documents: equal scores, so ties at the cut are common.
    docs += [Document(id=f"c{i:04d}", text=docs[i % 7].text) for i in range(40)]
    return Corpus(docs)


def _reference(scorer: Bm25Scorer, plan: Plan, k: int) -> tuple[list[int], list[int]]:
    """Every document at or above the k-th best score of full scoring, by ordinal."""
    ords, units = scorer.score_all(plan)
    if k <= 0:
        return [], []
    if len(units) > k:
        cut = np.partition(units, len(units) - k)[len(units) - k]
        ords, units = ords[units >= cut], units[units >= cut]
    return ords.tolist(), units.tolist()


def _kernel(scorer: Bm25Scorer, plan: Plan, k: int,
            whole: bool = True) -> tuple[list[int], list[int]]:
    """The kernel's answer by ordinal: as the scorer calls it (an exhaustive plan's sums in a
    lent array of all documents), or with none lent (``whole`` false: per window)."""
    if whole:
        ords, units = scorer.score_top(plan, k)
    else:
        lists, groups, additive = scorer.list_table(plan)
        found = kernel.top_candidates(
            scorer.docs, scorer.impacts, lists, groups, additive, scorer.n_docs,
            scorer.weight_bits, k, 1 << scorer.coverage_bits, scorer.coverage, len(plan),
            pool=scorer.unions.arrays)
        assert found is not None
        ords, units = found
    order = np.argsort(ords)
    return np.asarray(ords)[order].tolist(), np.asarray(units)[order].tolist()


@pytest.fixture(scope="module")
def prf_index() -> Bm25PrfIndex:
    return Bm25PrfProvider(synonyms={"w1": ["w2"]}).build(_corpus(11))


def force_paths(monkeypatch: pytest.MonkeyPatch, max_pruned: int) -> None:
    """Score plans of more than ``max_pruned`` terms exhaustively and every other by
    MaxScore, whatever the share rule (``PRUNE_SHARE``) would choose."""
    monkeypatch.setattr(kernel, "MAX_PRUNED", max_pruned)
    monkeypatch.setattr(kernel, "PRUNE_SHARE", (-1.0, 0.0))


# Exhaustive, mixed, always pruned, and as the share rule chooses (-1).
@pytest.mark.parametrize("max_pruned", [0, 3, 100, -1])
# 50 and 100: windows not a whole number of the exhaustive filter's blocks of 64.
@pytest.mark.parametrize("window", [50, 64, 100, 4096])
@pytest.mark.parametrize("whole", [True, False])
def test_both_paths_keep_exactly_the_documents_at_or_above_the_kth_score(
        prf_index: Bm25PrfIndex, max_pruned: int, window: int, whole: bool,
        monkeypatch: pytest.MonkeyPatch) -> None:
    if max_pruned >= 0:
        force_paths(monkeypatch, max_pruned)
    monkeypatch.setattr(kernel, "WINDOW", window)
    rng = random.Random(max_pruned * 7 + window)
    scorer = prf_index.scorer
    for _ in range(60):
        terms = [rng.choice(VOCAB) for _ in range(rng.randint(1, 8))]
        k = rng.choice([1, 2, 5, 10, 37, 100, 5000])  # 5000: more than match
        # The expanded (weighted, 10+ terms) plan and the first pass's plan.
        for plan in (prf_index.plan(terms), prf_index.base_plan(terms)):
            assert _kernel(scorer, plan, k, whole) == _reference(scorer, plan, k), (terms, k)


def test_concurrent_calls_are_each_lent_their_own_arrays_of_all_documents(
        monkeypatch: pytest.MonkeyPatch) -> None:
    force_paths(monkeypatch, 0)  # every plan exhaustive: every call writes its lent array
    index = Bm25PrfProvider().build(_corpus(23, n=20_000))
    scorer = index.scorer
    rng = random.Random(23)
    tasks = [(index.plan([rng.choice(VOCAB) for _ in range(rng.randint(2, 8))]),
              rng.choice([1, 10, 100])) for _ in range(40)]
    expected = [_reference(scorer, plan, k) for plan, k in tasks]
    # The kernel releases the GIL: four threads on two cores run calls at once, and arrays
    # shared between two of them would mix their sums.
    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(lambda task: _kernel(scorer, *task), tasks * 5))
    assert got == expected * 5
    lent = scorer._lendable
    assert 1 <= len(lent) <= 4
    assert not any(sums.any() for sums in lent), "an array was not returned zero"


def test_a_scorer_of_more_than_whole_docs_documents_lends_no_array(
        monkeypatch: pytest.MonkeyPatch) -> None:
    force_paths(monkeypatch, 0)
    index = Bm25PrfProvider().build(_corpus(29))
    scorer = index.scorer
    plan = index.plan(["w1", "w2", "w3"])
    monkeypatch.setattr(kernel, "WHOLE_DOCS", scorer.n_docs)
    assert _kernel(scorer, plan, 10) == _reference(scorer, plan, 10)
    assert len(scorer._lendable) == 1
    monkeypatch.setattr(kernel, "WHOLE_DOCS", scorer.n_docs - 1)
    scorer._lendable.clear()
    assert _kernel(scorer, plan, 10) == _reference(scorer, plan, 10)
    assert scorer._lendable == []


@pytest.mark.parametrize("max_pruned", [0, 100])
def test_ties_at_the_cut_are_all_kept_on_both_paths(max_pruned: int,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    force_paths(monkeypatch, max_pruned)
    monkeypatch.setattr(kernel, "WINDOW", 64)
    # Twenty identical documents: every one of them ties for first place.
    docs = [Document(id=f"t{i:03d}", text="tide pilot berth") for i in range(20)]
    docs += [Document(id=f"o{i:03d}", text=f"tide w{i}") for i in range(200)]
    index = Bm25Provider().build(Corpus(docs))
    plan = index.plan(["tide", "pilot", "berth"])
    for k in (1, 5, 19, 20, 21):
        ords, units = _kernel(index.scorer, plan, k)
        assert (ords, units) == _reference(index.scorer, plan, k)
        assert len(ords) >= max(k, 20) if k <= 20 else len(ords) >= k


@pytest.mark.parametrize("max_pruned", [0, 100])
def test_empty_plans_and_k_zero_return_nothing(prf_index: Bm25PrfIndex, max_pruned: int,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    force_paths(monkeypatch, max_pruned)
    scorer = prf_index.scorer
    assert _kernel(scorer, [], 10) == ([], [])
    assert _kernel(scorer, prf_index.plan(["w3", "w4"]), 0) == ([], [])
    unknown = prf_index.plan(["nothingmatchesthis"])
    assert _kernel(scorer, unknown, 10) == _reference(scorer, unknown, 10)


def _uncompiled_kernel(monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    """kernel.py loaded again with numba absent: the same loops as plain Python, where an
    index out of bounds raises instead of reading past an array."""
    monkeypatch.setattr(compiled, "njit", None)
    spec = importlib.util.spec_from_file_location(
        "rookhaven.core.providers._kernel_uncompiled", kernel.__file__)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _plain_top(plain: types.ModuleType, scorer: Bm25Scorer, plan: Plan, k: int,
               max_pruned: int, sums: np.ndarray) -> tuple[list[int], list[int]]:
    """The uncompiled kernel's answer for ``plan`` (windows of 50: not whole blocks of the
    exhaustive filter's 64), by ordinal."""
    lists, groups, additive = scorer.list_table(plan)
    ords, units, _ = plain._top_candidates(
        scorer.docs, scorer.impacts, lists, groups, additive, scorer.n_docs, scorer.weight_bits,
        k, 1 << scorer.coverage_bits, scorer.coverage, len(plan), plain.SMALL_LIST, 50,
        max_pruned, -1.0, 0.0, *scorer.unions.arrays, sums)
    order = np.argsort(ords)
    return np.asarray(ords)[order].tolist(), np.asarray(units)[order].tolist()


@pytest.mark.parametrize("max_pruned", [0, 3, 100])
@pytest.mark.parametrize("whole", [True, False])
def test_the_kernel_loops_stay_in_bounds_as_plain_python(
        prf_index: Bm25PrfIndex, max_pruned: int, whole: bool,
        monkeypatch: pytest.MonkeyPatch) -> None:
    plain = _uncompiled_kernel(monkeypatch)
    scorer = prf_index.scorer
    rng = random.Random(max_pruned)
    # Unknown terms (a group of no lists) and prefixes (groups of several) included.
    words = [*VOCAB, "nothingmatchesthis", "wid"]
    for _ in range(12):
        terms = [rng.choice(words) for _ in range(rng.randint(1, 6))]
        k = rng.choice([1, 5, 37, 5000])
        for plan in (prf_index.plan(terms), prf_index.base_plan(terms)):
            # Arrays of exactly the size the kernel asks for: one more read past them raises.
            sums = plain.whole_sums(scorer.n_docs) if whole else plain._EMPTY_SUMS
            got = _plain_top(plain, scorer, plan, k, max_pruned, sums)
            assert got == _reference(scorer, plan, k), (terms, k)
            assert not sums.any(), "the array was not returned zero"


def test_maxscore_is_chosen_where_one_long_list_holds_most_postings_for_the_k(
        monkeypatch: pytest.MonkeyPatch) -> None:
    prunes = _uncompiled_kernel(monkeypatch)._prunes
    at, slope = kernel.PRUNE_SHARE
    # 44,000 postings for k = 10 (syn100k's three-word queries): one list of 91% is skipped
    # enough to pay for MaxScore's bookkeeping, three even lists are not.
    assert prunes(np.array([40_000, 2_000, 2_000]), 10, 10, at, slope)
    assert not prunes(np.array([15_000, 15_000, 14_000]), 10, 10, at, slope)
    # The same 91% for k = 100 is too little to skip; at 1M documents (ten times the
    # postings) it is enough again.
    assert not prunes(np.array([40_000, 2_000, 2_000]), 100, 10, at, slope)
    assert prunes(np.array([400_000, 20_000, 20_000]), 100, 10, at, slope)
    # More terms than MAX_PRUNED, or nothing to score: exhaustive.
    assert not prunes(np.array([90_000] + [100] * 10), 10, 10, at, slope)
    assert not prunes(np.array([0, 0]), 10, 10, at, slope)


def test_term_bounds_are_each_lists_largest_impact_and_zero_for_an_empty_list() -> None:
    # Lists: [5, 9], [], [3], [], [] (terms 1, 3 and 4 have no postings).
    offsets = np.asarray([0, 2, 2, 3, 3, 3], dtype=np.int64)
    scorer = Bm25Scorer(offsets=offsets, docs=np.asarray([0, 1, 0], dtype=np.int32),
                        impacts=np.asarray([5, 9, 3], dtype=np.int32), n_docs=2, coverage=0,
                        coverage_bits=16, weight_bits=16)
    assert scorer.term_max == [9, 0, 3, 0, 0]
    empty = Bm25Scorer(offsets=np.zeros(3, dtype=np.int64), docs=np.zeros(0, dtype=np.int32),
                       impacts=np.zeros(0, dtype=np.int32), n_docs=0, coverage=0,
                       coverage_bits=16, weight_bits=16)
    assert empty.term_max == [0, 0]


@pytest.mark.parametrize("qtf", [1, 1 << 45])
def test_plans_the_packed_sums_cannot_hold_are_scored_exactly_elsewhere(
        qtf: int, monkeypatch: pytest.MonkeyPatch) -> None:
    # The kernel packs (sum << 8) + matched count into an int64: 256 terms or more (qtf
    # 1), or sums of 2**54 or more (qtf 2**45 on impacts up to 999), it declines, and the
    # scorer sums them in numpy instead.
    monkeypatch.setattr(kernel, "MAX_PRUNED", 0)
    monkeypatch.setattr(kernel, "WINDOW", 64)
    rng = random.Random(qtf)
    n_terms, n_docs = 300, 500
    # Documents 0-4 hold every term: matched by 300, a count that 8 bits cannot hold.
    postings: list[list[int]] = [
        [*range(5), *sorted(rng.sample(range(5, n_docs), rng.randint(1, 40)))]
        for _ in range(n_terms)]
    offsets = np.cumsum([0] + [len(p) for p in postings]).astype(np.int64)
    scorer = Bm25Scorer(
        offsets=offsets, docs=np.asarray([d for p in postings for d in p], dtype=np.int32),
        impacts=np.asarray([rng.randint(1, 999) for p in postings for _ in p], dtype=np.int32),
        n_docs=n_docs, coverage=1 << 14, coverage_bits=16, weight_bits=16)
    one = 1 << 16
    plan: Plan = [(qtf, ((t, one),)) for t in range(n_terms if qtf == 1 else 12)]
    lists, groups, additive = scorer.list_table(plan)
    assert kernel.top_candidates(scorer.docs, scorer.impacts, lists, groups, additive, n_docs,
                                 16, 10, 1 << 16, 1 << 14, len(plan)) is None
    for k in (1, 10, 100):
        assert _kernel(scorer, plan, k) == _reference(scorer, plan, k)


def test_the_lowest_set_bit_of_every_single_bit_and_of_random_words() -> None:
    # The plain function, and compiled as the kernel's fallback where numba is here.
    finds = [kernel.lowest_bit]
    if kernel.AVAILABLE:
        from numba import njit
        finds.append(njit(kernel.lowest_bit))
    rng = np.random.default_rng(5)
    words = [1 << i for i in range(64)] + [int(x) | 1 << 63 for x in rng.integers(1, 2**62, 500)]
    for word in words:
        expected = (word & -word).bit_length() - 1
        for find in finds:
            assert find(np.uint64(word)) == expected
