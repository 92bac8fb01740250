"""BM25F with prefix matches, query-side synonyms and a coverage factor, in exact integers.

Per query term, a document earns the best of: its own impact (weight 1), the impact of an
indexed term the query term is a strict prefix of (``prefix_weight``), or of a synonym
(``synonym_weight``); times the term's count in the query. The sum is then scaled by the
coverage factor ``(1 - c) + c * matched / distinct`` so that matching more distinct query
terms beats repeating one. Every weight is a fixed-point integer; see ``impacts``.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
import numpy.typing as npt

from ...errors import ConfigError
from ..analyzer import Analyzer
from ..canonical import canonical_bytes, sha256_digest
from ..corpus import RecordSource
from ..index import InvertedIndex, build_index
from .base import IntArray
from .impacts import SCALE, capped_weight, idf_table, term_impacts
from .scoring import Bm25Scorer, Expansion

WEIGHT_BITS = 16  # query-side weights (prefix, synonym) in 1/65536 units
COVERAGE_BITS = 8  # coverage in 1/256 units, small enough that no product overflows int64
EXPANSION_MEMO = 4096  # distinct query terms whose expansion an index remembers

DEFAULT_FIELD_WEIGHTS = {"title": 2.0, "keywords": 1.5, "text": 1.0}


def _fraction(name: str, value: float, bits: int) -> int:
    if not 0.0 <= value <= 1.0:
        raise ConfigError(f"{name} must be between 0 and 1, got {value!r}")
    return round(value * (1 << bits))


def analyzed_synonyms(synonyms: Mapping[str, Sequence[str]],
                      analyzer: Analyzer) -> dict[str, tuple[str, ...]]:
    """Synonyms as analyzed terms, sorted: each term maps to the other terms it may match."""
    out: dict[str, set[str]] = {}
    for head in sorted(synonyms):
        heads = analyzer.terms(head)
        for other in synonyms[head]:
            for h in heads:
                out.setdefault(h, set()).update(t for t in analyzer.terms(other) if t != h)
    return {h: tuple(sorted(out[h])) for h in sorted(out) if out[h]}


def _most_frequent(offsets: npt.NDArray[np.int64], lo: int, hi: int,
                   limit: int) -> tuple[list[int], int]:
    """The ``limit`` terms of ``[lo, hi)`` with the most postings (ties: lower id), ascending,
    and the first of them by (-df, id)."""
    df = np.diff(offsets[lo:hi + 1])
    first = lo + int(np.argmax(df))  # argmax returns the lowest index among equal maxima
    if hi - lo <= limit:
        return list(range(lo, hi)), first
    # Every term above the limit-th largest df, then the lowest ids at exactly that df.
    cut = int(np.partition(df, len(df) - limit)[len(df) - limit])
    above = np.flatnonzero(df > cut)
    at = np.flatnonzero(df == cut)[: limit - len(above)]
    return (np.union1d(above, at) + lo).tolist(), first


@dataclass(frozen=True)
class Bm25Provider:
    """The default ranker: BM25F over title/keywords/text with exact integer scores."""

    analyzer: Analyzer = field(default_factory=lambda: Analyzer(stemmer="english"))
    k1: float = 1.2
    b: float = 0.75
    prefix_weight: float = 0.4
    prefix_min_len: int = 4
    prefix_max_terms: int = 64
    coverage: float = 0.25
    synonym_weight: float = 0.5
    synonyms: Mapping[str, Sequence[str]] = field(default_factory=dict)
    field_weights: Mapping[str, float] = field(
        default_factory=lambda: dict(DEFAULT_FIELD_WEIGHTS))
    name: str = "bm25"
    version: str = "1"
    scale: int = SCALE
    merge: str = "whole-query"
    # Put the exact parameters into config(), so an audit alone rebuilds this provider.
    record_parameters: bool = False

    def __post_init__(self) -> None:
        if not self.k1 >= 0 or not 0 <= self.b <= 1:
            raise ConfigError(f"bm25 needs k1 >= 0 and 0 <= b <= 1, got k1={self.k1} b={self.b}")
        if self.prefix_min_len < 1 or self.prefix_max_terms < 0:
            raise ConfigError("prefix_min_len must be >= 1 and prefix_max_terms >= 0")
        for name in ("prefix_weight", "synonym_weight", "coverage"):
            _fraction(name, getattr(self, name), WEIGHT_BITS)

    @cached_property
    def _synonyms(self) -> dict[str, tuple[str, ...]]:
        return analyzed_synonyms(self.synonyms, self.analyzer)

    def parameters(self) -> dict[str, Any]:
        """The parameters this provider was built with, JSON-ready and in a fixed order."""
        # The split is a parameter only of the engines that take one (bm25@5 on): the
        # parameters recorded by earlier versions stay what they were.
        split = {} if self.analyzer.split == "alnum-runs" else {"split": self.analyzer.split}
        return {
            "stopwords": self.analyzer.stopwords, "stemmer": self.analyzer.stemmer, **split,
            "k1": self.k1, "b": self.b, "prefix_weight": self.prefix_weight,
            "prefix_min_len": self.prefix_min_len, "prefix_max_terms": self.prefix_max_terms,
            "coverage": self.coverage, "synonym_weight": self.synonym_weight,
            "synonyms": {k: list(self.synonyms[k]) for k in sorted(self.synonyms)},
            "field_weights": {k: float(self.field_weights[k]) for k in sorted(self.field_weights)},
        }

    def config(self) -> dict[str, Any]:
        syn = self._synonyms
        config = {
            "analyzer": self.analyzer.config(), "k1": self.k1, "b": self.b,
            "idf": "ln(1+(N-df+0.5)/(df+0.5))", "scale_bits": SCALE.bit_length() - 1,
            "prefix_weight": _fraction("prefix_weight", self.prefix_weight, WEIGHT_BITS),
            "prefix_min_len": self.prefix_min_len, "prefix_max_terms": self.prefix_max_terms,
            "prefix_df": "own-capped-at-term-idf", "weight_unit": f"1/{1 << WEIGHT_BITS}",
            "coverage": _fraction("coverage", self.coverage, COVERAGE_BITS),
            "coverage_unit": f"1/{1 << COVERAGE_BITS}",
            "synonym_weight": _fraction("synonym_weight", self.synonym_weight, WEIGHT_BITS),
            "synonyms": {"count": len(syn),
                         "digest": sha256_digest(canonical_bytes(sorted(syn.items())))},
            "field_weights": {k: float(self.field_weights[k]) for k in sorted(self.field_weights)},
        }
        if self.record_parameters:
            config["parameters"] = self.parameters()
        return config

    @property
    def indexes_forms(self) -> bool:
        """Whether its index keeps each posting's form byte (ADR 0067): no released bm25."""
        return False

    def build(self, corpus: RecordSource) -> Bm25Index:
        index = build_index(corpus, self.analyzer, self.field_weights,
                            forms=self.indexes_forms)
        term_idf = idf_table(index.df(), index.n_docs)
        impacts = term_impacts(index, self.k1, self.b, term_idf)
        # Scoring reads impacts only: release the counts (a third of the index's memory).
        index = dataclasses.replace(index, tfs=np.zeros(0, dtype=np.int32))
        return Bm25Index(
            index=index, impacts=impacts,
            term_idf=term_idf.tolist(),
            prefix_weight=_fraction("prefix_weight", self.prefix_weight, WEIGHT_BITS),
            prefix_min_len=self.prefix_min_len, prefix_max_terms=self.prefix_max_terms,
            synonym_weight=_fraction("synonym_weight", self.synonym_weight, WEIGHT_BITS),
            synonyms=self._synonyms,
            coverage=_fraction("coverage", self.coverage, COVERAGE_BITS),
        )


@dataclass
class Bm25Index:
    """The inverted index with one integer impact per posting, ready to score term lists.

    ``index.tfs`` is released once impacts exist; the impacts are what scoring reads.
    """

    index: InvertedIndex
    impacts: npt.NDArray[np.int32]
    term_idf: list[float]
    prefix_weight: int
    prefix_min_len: int
    prefix_max_terms: int
    synonym_weight: int
    synonyms: dict[str, tuple[str, ...]]
    coverage: int
    # A term's expansion depends only on this index (vocabulary, document frequencies,
    # IDFs, weights), all fixed once built, so remembering it cannot change a score.
    _expansions: dict[str, Expansion] = field(default_factory=dict, init=False, repr=False,
                                              compare=False)

    @cached_property
    def scorer(self) -> Bm25Scorer:
        return Bm25Scorer(self.index.offsets, self.index.docs, self.impacts, self.index.n_docs,
                          self.coverage, COVERAGE_BITS, WEIGHT_BITS)

    def expand(self, term: str) -> Expansion:
        """(term id, weight) pairs one query term matches, ascending by term id.

        Variants (prefix extensions, synonyms) weigh ``prefix_weight``/``synonym_weight``
        times min(1, reference IDF / their IDF); the reference is the term's own IDF, or,
        when the term is not indexed, that of its most frequent extension. The last
        ``EXPANSION_MEMO`` distinct terms are remembered.
        """
        memo = self._expansions
        found = memo.get(term)
        if found is None:
            if len(memo) >= EXPANSION_MEMO:
                del memo[next(iter(memo))]  # the oldest entry
            found = memo[term] = self._expand(term)
        return found

    def _expand(self, term: str) -> Expansion:
        ids, idf = self.index.term_ids, self.term_idf
        own = ids.get(term)
        longer: list[int] = []
        most_frequent: int | None = None  # of the extensions: highest df, then lowest id
        if self.prefix_weight and len(term) >= self.prefix_min_len and self.prefix_max_terms:
            lo, hi = self.index.prefix_range(term)
            if own is not None:
                lo += 1  # the term sorts first among the terms it prefixes
            if lo < hi:
                longer, most_frequent = _most_frequent(self.index.offsets, lo, hi,
                                                       self.prefix_max_terms)
        weights: dict[int, int] = {}
        reference: float | None = None
        if own is not None:
            weights[own] = 1 << WEIGHT_BITS
            reference = idf[own]
        elif most_frequent is not None:
            reference = idf[most_frequent]
        variants = [(t, self.prefix_weight) for t in longer]
        if self.synonym_weight:
            variants += [(ids[s], self.synonym_weight) for s in self.synonyms.get(term, ())
                         if s in ids]
        for t, weight in variants:
            capped = capped_weight(weight, WEIGHT_BITS, idf[t], reference)
            if capped > weights.get(t, 0):
                weights[t] = capped
        return tuple(sorted(weights.items()))

    def plan(self, terms: Sequence[str]) -> list[tuple[int, Expansion]]:
        """Each distinct query term's count and expansion, in term order."""
        distinct = sorted(set(terms))
        expand = self.expand
        if len(distinct) == len(terms):  # the usual query, each term once: no counting
            return [(1, expand(t)) for t in distinct]
        counts = Counter(terms)
        return [(counts[t], expand(t)) for t in distinct]

    def score(self, terms: Sequence[str]) -> tuple[IntArray, IntArray]:
        return self.scorer.score_all(self.plan(terms))

    def top(self, terms: Sequence[str], k: int) -> tuple[IntArray, IntArray]:
        """Every document scoring at least the k-th best score (ties at the cut included)."""
        return self.scorer.score_top(self.plan(terms), k)

    def score_of(self, terms: Sequence[str], ords: IntArray) -> IntArray:
        """The scores of the documents ``ords`` (0 where a document does not match)."""
        return self.scorer.score_docs(self.plan(terms), ords)
