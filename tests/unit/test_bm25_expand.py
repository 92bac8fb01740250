"""Query-term expansion: the fast path and its memo give exactly the reference expansions."""

from __future__ import annotations

import random

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from rookhaven.core.analyzer import Analyzer
from rookhaven.core.corpus import Corpus
from rookhaven.core.providers.bm25 import (
    EXPANSION_MEMO,
    WEIGHT_BITS,
    Bm25Index,
    Bm25Provider,
)
from rookhaven.core.providers.impacts import capped_weight
from rookhaven.core.providers.scoring import Expansion
from rookhaven.models import Document


def _reference_expand(index: Bm25Index, term: str) -> Expansion:
    """The expansion as first written: plain loops, numpy ``capped_weight``."""
    ids, idf, df = index.index.term_ids, index.term_idf, index.index.df().tolist()
    weights: dict[int, int] = {}
    longer: list[int] = []
    if index.prefix_weight and len(term) >= index.prefix_min_len:
        lo, hi = index.index.prefix_range(term)
        longer = [t for t in range(lo, hi) if index.index.vocabulary[t] != term]
        if len(longer) > index.prefix_max_terms:
            longer = sorted(longer, key=lambda t: (-df[t], t))[: index.prefix_max_terms]
    reference: float | None = None
    if term in ids:
        weights[ids[term]] = 1 << WEIGHT_BITS
        reference = idf[ids[term]]
    elif longer:
        reference = idf[min(longer, key=lambda t: (-df[t], t))]
    variants = [(t, index.prefix_weight) for t in longer]
    if index.synonym_weight:
        variants += [(ids[s], index.synonym_weight) for s in index.synonyms.get(term, ())
                     if s in ids]
    for t, weight in variants:
        capped = capped_weight(weight, WEIGHT_BITS, idf[t], reference)
        weights[t] = max(weights.get(t, 0), capped)
    return tuple(sorted(weights.items()))


def _corpus(seed: int) -> Corpus:
    rng = random.Random(seed)
    stems = ["wid", "wide", "cran", "tide", "harb", "pilo"]
    vocab = [s + "".join(rng.choice("abcde") for _ in range(rng.randint(0, 3)))
             for s in stems for _ in range(12)]
    return Corpus(Document(id=f"d{i:04d}", text=" ".join(
        rng.choice(vocab) for _ in range(rng.randint(1, 20)))) for i in range(300))


def test_expansions_equal_the_reference_for_every_prefix_limit_and_synonym() -> None:
    corpus = _corpus(3)
    probes = ["wid", "wide", "widea", "cran", "crane", "tide", "harbour", "pilo", "zzzz", "w"]
    for limit in (0, 1, 2, 5, 64):
        for min_len in (1, 4):
            index = Bm25Provider(analyzer=Analyzer(), prefix_max_terms=limit,
                                 prefix_min_len=min_len,
                                 synonyms={"tide": ["harb", "pilo"], "cran": ["wide"]}
                                 ).build(corpus)
            for term in probes + list(index.index.vocabulary):
                assert index.expand(term) == _reference_expand(index, term), (term, limit)
                assert index.expand(term) == _reference_expand(index, term), "memo changed it"


def test_the_memo_stays_bounded_and_forgets_nothing_it_needs() -> None:
    index = Bm25Provider(analyzer=Analyzer()).build(_corpus(5))
    for i in range(EXPANSION_MEMO + 10):
        index.expand(f"t{i}")
    assert len(index._expansions) == EXPANSION_MEMO
    assert index.expand("wide") == _reference_expand(index, "wide")


@given(st.integers(1, 1 << WEIGHT_BITS),
       st.floats(min_value=1e-9, max_value=50.0), st.floats(min_value=1e-9, max_value=50.0))
def test_the_plain_float_cap_equals_the_numpy_one(weight: int, variant: float,
                                                  reference: float) -> None:
    with_numpy = weight if reference >= variant else max(
        (weight * int(np.floor(reference / variant * (1 << WEIGHT_BITS)))) >> WEIGHT_BITS, 1)
    assert capped_weight(weight, WEIGHT_BITS, variant, reference) == with_numpy
    assert capped_weight(weight, WEIGHT_BITS, variant, None) == weight
