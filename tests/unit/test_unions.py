"""The union pool: query terms of several lists merged once, with the kernel's own values."""

from __future__ import annotations

import random
import threading

import numpy as np
import pytest

from rookhaven import Document
from rookhaven.core.corpus import Corpus
from rookhaven.core.providers import kernel, unions
from rookhaven.core.providers.bm25prf import Bm25PrfIndex, Bm25PrfProvider
from rookhaven.core.providers.scoring import Bm25Scorer, Plan
from rookhaven.core.providers.unions import UnionPool

from .test_kernel_paths import (
    VOCAB,
    _corpus,
    _kernel,
    _plain_top,
    _reference,
    _uncompiled_kernel,
    force_paths,
)

pytestmark = pytest.mark.skipif(not kernel.AVAILABLE, reason="numba is not installed")


# Families of words sharing a prefix: query terms of several lists.
FAMILIES = ["berth", "berths", "berthing", "berthed", "pilot", "pilots", "piloting",
            "pilotage", "tide", "tides", "tidewater", "cargo", "cargoes"]
WORDS = [*VOCAB, *FAMILIES]


def _fresh(capacity: int, whole_upto: int = 0) -> Bm25PrfIndex:
    """An index of its own whose scorer's pool holds at most ``capacity`` postings, each term
    in parts unless its merged list has at most ``whole_upto`` postings."""
    rng = random.Random(5)
    docs = list(_corpus(5))
    docs += [Document(id=f"f{i:04d}", text=" ".join(
        rng.choice(WORDS) for _ in range(rng.randint(1, 20)))) for i in range(400)]
    index = Bm25PrfProvider(synonyms={"w1": ["w2"], "wide": ["w7", "w9"]}).build(Corpus(docs))
    scorer = index.scorer
    scorer.__dict__["unions"] = UnionPool(scorer.docs, scorer.impacts, scorer.weight_bits,
                                          capacity, whole_upto)
    return index


def _several(index: Bm25PrfIndex) -> list[tuple[tuple[int, int], ...]]:
    """Expansions of more than one list among the vocabulary's terms and prefixes."""
    found = {index.expand(t) for t in [*WORDS, "wid", "w1"]}
    return sorted(e for e in found if len(e) > 1)


def test_a_small_term_is_pooled_whole_each_document_once_at_its_best_value() -> None:
    index = _fresh(1 << 20, whole_upto=1 << 20)
    scorer, expansions = index.scorer, _several(index)
    for expansion in expansions:
        found = scorer.unions.parts_of(expansion, scorer._starts)
        assert found is not None and found.base == -1 and len(found.rows) == 1
        (start, end, count), = found.rows
        docs, values = scorer.unions.arrays
        want_d, want_v = scorer.group(expansion)
        assert docs[start:end].tolist() == want_d.tolist()
        assert values[start:end].tolist() == want_v.tolist()
        assert count == 1 and found.best == int(want_v.max())
    # The default: whole up to a share of the pool (these terms are far below it).
    pool = UnionPool(scorer.docs, scorer.impacts, scorer.weight_bits)
    assert pool.whole_upto == unions.CAPACITY // unions.WHOLE_SHARE
    assert all(pool.parts_of(e, scorer._starts).base == -1 for e in expansions)


def test_a_pooled_term_sums_to_its_best_value_and_counts_each_document_once() -> None:
    index = _fresh(1 << 20)
    scorer, expansions = index.scorer, _several(index)
    assert len(expansions) >= 3
    one = 1 << scorer.weight_bits
    differences = 0
    for expansion in expansions:
        found = scorer.unions.parts_of(expansion, scorer._starts)
        assert found is not None
        docs, values = scorer.unions.arrays
        base_d, base_v = scorer.group((expansion[found.base],))
        assert len(base_d) == max(len(scorer.group((e,))[0]) for e in expansion)
        summed = dict(zip(base_d.tolist(), base_v.tolist(), strict=True))
        counted = dict.fromkeys(base_d.tolist(), 1)
        for start, end, count in found.rows:
            part = docs[start:end].tolist()
            assert part == sorted(set(part))  # ascending, each document once
            for doc, value in zip(part, values[start:end].tolist(), strict=True):
                assert value > 0
                summed[doc] = summed.get(doc, 0) + value
                counted[doc] = counted.get(doc, 0) + count
            differences += count == 0
        want_d, want_v = scorer.group(expansion)
        assert summed == dict(zip(want_d.tolist(), want_v.tolist(), strict=True))
        assert counted == dict.fromkeys(want_d.tolist(), 1)
        others = tuple(e for i, e in enumerate(expansion) if i != found.base)
        assert found.best == int(scorer.group(others)[1].max())
        assert all(w <= one for _, w in expansion)
        assert scorer.unions.parts_of(expansion, scorer._starts) is found  # kept, not redone
    assert differences > 0  # some base held a document below an extension's value


@pytest.mark.parametrize("max_pruned", [0, 100])
@pytest.mark.parametrize("whole", [True, False])
# Lists under SMALL_LIST postings are folded into one per call; under 4, a term's lists stay
# apart, as the long lists of a large corpus do.
@pytest.mark.parametrize("small", [kernel.SMALL_LIST, 4])
@pytest.mark.parametrize("whole_upto", [0, 150])
def test_a_full_pool_keeps_what_it_has_and_the_rest_is_scored_as_before(
        max_pruned: int, whole: bool, small: int, whole_upto: int,
        monkeypatch: pytest.MonkeyPatch) -> None:
    force_paths(monkeypatch, max_pruned)
    monkeypatch.setattr(kernel, "WINDOW", 64)
    monkeypatch.setattr(kernel, "SMALL_LIST", small)
    # Room for a few terms only (in parts: 39 to 394 postings; whole, under 150: one of 143).
    index = _fresh(300, whole_upto)
    scorer = index.scorer
    rng = random.Random(max_pruned)
    words = [*WORDS, "wid", "w1"]
    mixed = 0  # plans with a pooled term beside a term of several lists folded per call
    for _ in range(80):
        terms = [rng.choice(words) for _ in range(rng.randint(1, 6))]
        k = rng.choice([1, 5, 37, 5000])
        for plan in (index.plan(terms), index.base_plan(terms)):
            assert _kernel(scorer, plan, k, whole) == _reference(scorer, plan, k), (terms, k)
            lists, groups, additive = scorer.list_table(plan)
            pooled = bool((lists[:, 0] >= len(scorer.docs)).any())
            mixed += pooled and bool(((np.diff(groups) > 1) & (additive == 0)).any())
    assert mixed > 0
    pool = scorer.unions
    kept = [e for e in _several(index) if pool.parts_of(e, scorer._starts) is not None]
    assert kept and len(kept) < len(_several(index))  # some pooled, some refused
    assert len(pool.arrays[0]) <= 300


def test_threads_filling_one_pool_score_as_one_thread_does() -> None:
    index = _fresh(1 << 20)
    scorer: Bm25Scorer = index.scorer
    rng = random.Random(9)
    words = [*WORDS, "wid", "w1"]
    plans: list[tuple[Plan, int]] = []
    for _ in range(120):
        terms = [rng.choice(words) for _ in range(rng.randint(1, 6))]
        plans.append((index.base_plan(terms), rng.choice([1, 10, 100])))
    want = [_reference(scorer, plan, k) for plan, k in plans]
    # Some term's base holds a document below another list's value: a row counted 0.
    assert any((scorer.list_table(plan)[0][:, 5] == 0).any() for plan, _ in plans)
    failures: list[int] = []
    barrier = threading.Barrier(4)

    def run(offset: int) -> None:
        barrier.wait()
        for i in range(len(plans)):
            j = (i + offset * 31) % len(plans)
            if _kernel(scorer, *plans[j]) != want[j]:
                failures.append(j)

    threads = [threading.Thread(target=run, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []


@pytest.mark.parametrize("max_pruned", [0, 100])
@pytest.mark.parametrize("whole", [True, False])
@pytest.mark.parametrize("small", [kernel.SMALL_LIST, 4])
@pytest.mark.parametrize("whole_upto", [0, 150])
def test_pooled_and_folded_terms_stay_in_bounds_as_plain_python(
        max_pruned: int, whole: bool, small: int, whole_upto: int,
        monkeypatch: pytest.MonkeyPatch) -> None:
    index = _fresh(300, whole_upto)
    scorer = index.scorer
    plain = _uncompiled_kernel(monkeypatch)
    monkeypatch.setattr(plain, "SMALL_LIST", small)
    rng = random.Random(max_pruned + 1)
    for _ in range(15):
        terms = [rng.choice([*WORDS, "wid"]) for _ in range(rng.randint(1, 5))]
        k = rng.choice([1, 5, 5000])
        for plan in (index.plan(terms), index.base_plan(terms)):
            sums = plain.whole_sums(scorer.n_docs) if whole else plain._EMPTY_SUMS
            got = _plain_top(plain, scorer, plan, k, max_pruned, sums)
            assert got == _reference(scorer, plan, k), (terms, k)
            assert not sums.any(), "the array was not returned zero"


def test_a_full_pool_merges_nothing_it_cannot_keep_and_forgets_its_refusals(
        monkeypatch: pytest.MonkeyPatch) -> None:
    index = _fresh(1 << 20)
    scorer = index.scorer
    expansions = _several(index)
    merged: list[int] = []
    monkeypatch.setattr(kernel, "union", lambda *args: merged.append(1) or
                        kernel._union(args[0], args[1], np.ascontiguousarray(args[2]), args[3]))
    # No room at all: nothing is merged only to be thrown away.
    full = UnionPool(scorer.docs, scorer.impacts, scorer.weight_bits, capacity=0)
    assert all(full.parts_of(e, scorer._starts) is None for e in expansions)
    assert merged == [] and not full._refused
    # Room for less than a term's parts: merged once, refused, not merged again.
    sizes = {e: sum(end - start for start, end, _ in scorer.unions.parts_of(
        e, scorer._starts).rows) for e in expansions}
    expansion = max(expansions, key=lambda e: sizes[e])
    merged.clear()
    pool = UnionPool(scorer.docs, scorer.impacts, scorer.weight_bits,
                     capacity=sizes[expansion] - 1)
    for _ in range(3):
        assert pool.parts_of(expansion, scorer._starts) is None
    assert len(merged) == 1 and pool.used == 0 and len(pool.arrays[0]) == 0
    # The refusals are forgotten in a batch: a full pool's memory does not grow with queries.
    monkeypatch.setattr(unions, "REFUSED_MEMO", 2)
    one = np.ones(sizes[expansion], dtype=np.int32)
    for term in range(5):
        pool._add(((term, 1 << 16), (term + 1, 1 << 16)), 0, 1, ((one, one, 1),))
        assert len(pool._refused) <= 2


def test_the_last_document_counts_in_every_list_of_a_term_of_several(
        monkeypatch: pytest.MonkeyPatch) -> None:
    force_paths(monkeypatch, 0)
    monkeypatch.setattr(kernel, "SMALL_LIST", 1)  # no list folded: each streamed as it is
    texts = ["berth pilot", "quay tide", "wharf helm", "tide"] * 80 + ["wharf quay helm"]
    docs = [Document(id=f"d{i:03d}", text=text) for i, text in enumerate(texts)]
    index = Bm25PrfProvider(synonyms={"berth": ["quay", "wharf"], "pilot": ["helm"]}).build(
        Corpus(docs))
    scorer = index.scorer
    scorer.__dict__["unions"] = UnionPool(scorer.docs, scorer.impacts, scorer.weight_bits, 0)
    plan = index.base_plan(["berth", "pilot"])
    _, groups, _ = scorer.list_table(plan)
    assert (np.diff(groups) > 1).all()  # both terms several lists, none pooled
    got = _kernel(scorer, plan, 5000)  # such terms are added per window, array lent or not
    assert got == _reference(scorer, plan, 5000)
    assert len(docs) - 1 in got[0]
