"""Hybrid ranking: bm25's lexical ranking fused with a static embedding model's, in integers.

Per (sub)query the lexical list is bm25@6's ranking (the same integer scores) to
``lexical_depth`` ranks, the semantic list the documents' exact cosine keys
(``core.semantic.vectors``) to ``semantic_depth`` ranks; reciprocal-rank fusion
(``core.semantic.fusion``) gives each document one integer score. Where the lexical list is
already sure (a best-scoring document matches at least ``confident_coverage`` of the
query's distinct terms), the semantic list weighs ``confident_semantic_weight`` instead.
Document vectors are built in the index pass; the model is the one whose vector table's
sha256 the config records (ADR 0044). ``GatedHybridProvider``, the candidate for hybrid@2
(not released), ties both depths to the request's budget, weighs the semantic list by how
much of the (sub)query the model reads whole (ADRs 0056, 0059, 0066) and ranks a word held
in the query's own form above a stem-only match (ADR 0067).
"""

from __future__ import annotations

import dataclasses
from bisect import bisect_left
from collections.abc import Callable, Iterator, Mapping, Sequence, Sized
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...errors import ConfigError
from ..corpus import RecordSource
from ..index import FORM_BITS
from ..semantic import fusion
from ..semantic.coverage import WHOLE, coverage, stepped_weight
from ..semantic.lists import EMPTY, fused, one_call, ranked, semantic_list
from ..semantic.model import StaticModel
from ..semantic.shelf import SHELF
from ..semantic.vectors import (
    CODE_DIMS,
    MAX_DIM,
    document_vectors,
    query_vector,
    rarity_weights,
    sign_codes,
)
from .base import IntArray
from .bm25 import Bm25Index, Bm25Provider, _fraction
from .exactwords import exact_bonus
from .scoring import Plan

_NO_IDS = np.zeros(0, np.int64)
QUERY_WEIGHTINGS = ("none", "rarity")
COVERAGE_BITS = 8
WHOLE_MEMO = 1 << 16  # tokens whose coverage verdict an index remembers


def document_body(record: Mapping[str, Any]) -> str:
    """What a document's vector is built from: its fields in name order, then its text."""
    fields = record["fields"] or {}
    return " ".join([*(fields[name] for name in sorted(fields)), record["text"]])


@dataclass(frozen=True)
class HybridProvider(Bm25Provider):
    """bm25 fused with a static embedding model; every score an exact integer."""

    model: str = ""  # the vector table's sha256; empty: the installed default model
    rrf_k: int = 20
    lexical_weight: float = 0.8
    semantic_weight: float = 0.2
    lexical_depth: int = 100
    semantic_depth: int = 100
    # "rarity": a query token's row weighs bit_length((N + 1) // (df + 1)) in the corpus.
    query_weighting: str = "none"
    # Above this many documents, exact keys only for those nearest by sign-code distance.
    semantic_prefilter: int = 1000
    # A lexical rank-1 document matching every distinct query term: lexical ranking alone.
    confident_coverage: float = 1.0  # 0: the semantic weight never changes
    confident_semantic_weight: float = 0.0
    name: str = "hybrid"
    scale: int = fusion.SCALE

    def __post_init__(self) -> None:
        super().__post_init__()
        if not self.model:
            object.__setattr__(self, "model", SHELF.default_digest())
        if self.rrf_k < 1 or self.lexical_depth < 0 or self.semantic_depth < 0:
            raise ConfigError("hybrid needs rrf_k >= 1 and depths >= 0")
        if self.query_weighting not in QUERY_WEIGHTINGS:
            raise ConfigError(f"query_weighting must be one of {', '.join(QUERY_WEIGHTINGS)}, "
                              f"got {self.query_weighting!r}")
        if self.semantic_prefilter < self.semantic_depth:
            raise ConfigError("semantic_prefilter must be at least semantic_depth")
        for name in ("lexical_weight", "semantic_weight", "confident_semantic_weight"):
            _fraction(name, getattr(self, name), fusion.WEIGHT_BITS)
        _fraction("confident_coverage", self.confident_coverage, COVERAGE_BITS)

    @property
    def static_model(self) -> StaticModel:
        return SHELF.model(self.model)

    def parameters(self) -> dict[str, Any]:
        return {**super().parameters(), "model": self.model, "rrf_k": self.rrf_k,
                "lexical_weight": self.lexical_weight, "semantic_weight": self.semantic_weight,
                "lexical_depth": self.lexical_depth, "semantic_depth": self.semantic_depth,
                "semantic_prefilter": self.semantic_prefilter,
                "query_weighting": self.query_weighting,
                "confident_coverage": self.confident_coverage,
                "confident_semantic_weight": self.confident_semantic_weight}

    def config(self) -> dict[str, Any]:
        model = self.static_model
        if model.dim > MAX_DIM:
            raise ConfigError(f"model {self.model} has {model.dim} dimensions; at most "
                              f"{MAX_DIM} keep its dot products exact in int32")
        weight = fusion.WEIGHT_BITS
        return {**super().config(), "fusion": {
            "rule": "rrf: weight * 2^24 // (k + competition rank), summed over both lists",
            "k": self.rrf_k, "weight_unit": f"1/{1 << weight}",
            "lexical_weight": _fraction("lexical_weight", self.lexical_weight, weight),
            "semantic_weight": _fraction("semantic_weight", self.semantic_weight, weight),
            "lexical_depth": self.lexical_depth, "semantic_depth": self.semantic_depth,
            "semantic_prefilter": self.semantic_prefilter,
            "query_weighting": self.query_weighting,
            "confident_coverage": _fraction("confident_coverage", self.confident_coverage,
                                         COVERAGE_BITS),
            "confident_coverage_unit": f"1/{1 << COVERAGE_BITS}",
            "confident_rule": "a document at lexical rank 1 matches at least confident_coverage "
                              "of the distinct query terms",
            "confident_semantic_weight": _fraction(
                "confident_semantic_weight", self.confident_semantic_weight, weight),
            "semantic": {"model": model.identity(), "document": "fields by name, text; "
                         "token sum scaled to int8",
                         "query": "token sum scaled to int16" if self.query_weighting == "none"
                         else "sum of token rows times bit_length((N + 1) // (df + 1)) over "
                              "the corpus's documents with a token, scaled to int16",
                         "key": "floor(dot * 2^20 / isqrt(|d|^2 * 2^16))",
                         "prefilter": "above semantic_prefilter documents, keys only for "
                                      "those within the least Hamming distance of sign "
                                      "codes that reaches semantic_prefilter, ties kept"}}}

    def build(self, corpus: RecordSource) -> HybridIndex:  # type: ignore[override]
        model = self.static_model
        tee = _Tee(corpus, model, count=self.query_weighting == "rarity")
        lexical = super().build(tee)
        vectors, radii, planes = tee.finish()
        weights = None if tee.df is None else rarity_weights(
            tee.df, int(np.count_nonzero(radii)))
        weight = fusion.WEIGHT_BITS
        return HybridIndex(
            lexical=lexical, vectors=vectors, radii=radii, planes=planes,
            model=model, k=self.rrf_k, prefilter=self.semantic_prefilter, weights=weights,
            lexical_weight=_fraction("lexical_weight", self.lexical_weight, weight),
            semantic_weight=_fraction("semantic_weight", self.semantic_weight, weight),
            lexical_depth=self.lexical_depth, semantic_depth=self.semantic_depth,
            confident_coverage=_fraction("confident_coverage", self.confident_coverage,
                                      COVERAGE_BITS),
            confident_weight=_fraction("confident_semantic_weight",
                                    self.confident_semantic_weight, weight))


@dataclass(frozen=True)
class GatedHybridProvider(HybridProvider):
    """The hybrid fusion with both lists ranked to max(recall budget, ``depth_floor``) and
    the semantic list weighed by the (sub)query's coverage: ``semantic_weight`` from
    ``coverage_full`` of its tokens held whole by the model, half of it from
    ``coverage_half``, none below (0 turns a step off); where the coverage reaches
    ``exact_coverage``, a lexical candidate holding a query token in that very form gains
    ``exact_weight`` of its stem posting's impact. The candidate for hybrid@2."""

    semantic_prefilter: int = 250
    lexical_depth: int = 0  # fixed depths, for a depth_floor of 0
    semantic_depth: int = 0
    depth_floor: int = 50
    coverage_full: float = 0.75
    coverage_half: float = 0.625
    # A query token a document holds in that very form adds this share of its stem's own
    # impact to the lexical score (ADR 0067); 0: stems alone, as bm25@6. Only where the
    # (sub)query's coverage reaches exact_coverage: the stemmer is English Snowball, whose
    # conflations an exact form corrects only in English.
    exact_weight: float = 0.25
    exact_coverage: float = 0.75

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.depth_floor < 0 or (self.depth_floor and (self.lexical_depth
                                                          or self.semantic_depth)):
            raise ConfigError("set depth_floor (>= 0) or the fixed lexical_depth and "
                              "semantic_depth, not both")
        _fraction("coverage_full", self.coverage_full, COVERAGE_BITS)
        _fraction("coverage_half", self.coverage_half, COVERAGE_BITS)
        _fraction("exact_weight", self.exact_weight, fusion.WEIGHT_BITS)
        _fraction("exact_coverage", self.exact_coverage, COVERAGE_BITS)

    @property
    def indexes_forms(self) -> bool:
        return self.exact_weight > 0

    def _coverage_steps(self) -> tuple[tuple[int, int], ...]:
        full = _fraction("semantic_weight", self.semantic_weight, fusion.WEIGHT_BITS)
        steps = ((_fraction("coverage_full", self.coverage_full, COVERAGE_BITS), full),
                 (_fraction("coverage_half", self.coverage_half, COVERAGE_BITS), full // 2))
        return tuple(step for step in steps if step[0])

    def parameters(self) -> dict[str, Any]:
        return {**super().parameters(), "depth_floor": self.depth_floor,
                "coverage_full": self.coverage_full, "coverage_half": self.coverage_half,
                "exact_weight": self.exact_weight, "exact_coverage": self.exact_coverage}

    def config(self) -> dict[str, Any]:
        config = super().config()
        config["fusion"] = {
            **config["fusion"],
            "depth_floor": self.depth_floor,
            "depth_rule": "both lists to max(recall budget, depth_floor) ranks; fixed "
                          "depths where depth_floor is 0",
            "coverage_steps": [list(step) for step in self._coverage_steps()],
            "coverage_rule": "the share, in 1/256 floored, of the (sub)query's analyzer "
                             "tokens (stop words included) the model's tokenizer encodes as "
                             "one token (none: 256); the weight of the first step whose "
                             "floor it reaches, 0 below every floor",
            "exact_weight": _fraction("exact_weight", self.exact_weight, fusion.WEIGHT_BITS),
            "exact_coverage": _fraction("exact_coverage", self.exact_coverage, COVERAGE_BITS),
            "exact_rule": "each distinct (sub)query token, not a stop word, that a lexical "
                          "candidate holds in that very form (one of its stem's first "
                          f"{FORM_BITS} forms, numbered in the order the index build first "
                          "learns them, chunk by chunk of the corpus) adds exact_weight * its "
                          "stem's impact >> 8 to the candidate's lexical score, where the "
                          "(sub)query's coverage reaches exact_coverage"}
        return config

    def build(self, corpus: RecordSource) -> HybridIndex:  # type: ignore[override]
        return dataclasses.replace(
            super().build(corpus), depth_floor=self.depth_floor,
            steps=self._coverage_steps(), tokens=self.analyzer.split_tokens,
            exact_weight=_fraction("exact_weight", self.exact_weight, fusion.WEIGHT_BITS),
            exact_coverage=_fraction("exact_coverage", self.exact_coverage, COVERAGE_BITS),
            stem=self.analyzer.terms_of)


class _Tee:
    """The corpus as the lexical build reads it, building each chunk's vectors on the way
    (a streamed corpus is read once)."""

    def __init__(self, corpus: RecordSource, model: StaticModel, count: bool) -> None:
        self._corpus, self._model = corpus, model
        # Documents holding each token, when the query weighs tokens by rarity.
        self.df = np.zeros(len(model.table), dtype=np.int64) if count else None
        # Filled in place when the corpus says its size (a Corpus and a CorpusStream do):
        # no second copy of every vector at the end.
        size = len(corpus) if isinstance(corpus, Sized) else 0
        self._vectors = np.zeros((size, model.dim), dtype=np.int8)
        self._radii = np.zeros(size, dtype=np.int64)
        # Sign codes by plane (``vectors.code_planes``): word w of every document together.
        self._planes = np.zeros((-(-min(model.dim, CODE_DIMS) // 64), size), dtype=np.uint64)
        self._filled = 0

    def record_chunks(self, size: int) -> Iterator[Iterator[dict[str, Any]]]:
        for chunk in self._corpus.record_chunks(size):
            records = list(chunk)
            vectors, radii = document_vectors(self._model, map(document_body, records),
                                              self.df)
            planes = sign_codes(vectors).T
            end = self._filled + len(records)
            if end > len(self._vectors):  # a source of unknown size: grow
                self._vectors = np.concatenate([self._vectors[:self._filled], vectors])
                self._radii = np.concatenate([self._radii[:self._filled], radii])
                self._planes = np.concatenate([self._planes[:, :self._filled], planes], axis=1)
            else:
                self._vectors[self._filled:end] = vectors
                self._radii[self._filled:end] = radii
                self._planes[:, self._filled:end] = planes
            self._filled = end
            yield iter(records)

    def finish(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The vectors, their radii (in document order) and their sign codes' planes."""
        end = self._filled
        return (self._vectors[:end], self._radii[:end],
                np.ascontiguousarray(self._planes[:, :end]))


@dataclass
class HybridIndex:
    """bm25's index and one int8 vector per document; ranked through ``for_texts``."""

    lexical: Bm25Index
    vectors: np.ndarray
    radii: np.ndarray
    planes: np.ndarray  # sign bits of each vector by plane, for the prefilter
    model: StaticModel
    prefilter: int
    weights: np.ndarray | None  # a query token's weight by rarity, or None (all 1)
    k: int
    lexical_weight: int
    semantic_weight: int
    lexical_depth: int
    semantic_depth: int
    confident_coverage: int
    confident_weight: int
    # Both lists' depth max(recall budget, depth_floor); 0: lexical_depth and semantic_depth.
    depth_floor: int = 0
    # The semantic weight by the (sub)query's coverage (``semantic.coverage``): (floor in
    # 1/256, weight) by descending floor; empty: semantic_weight whatever the coverage.
    steps: tuple[tuple[int, int], ...] = ()
    tokens: Callable[[str], list[str]] | None = None  # the analyzer's, for the coverage
    # Exact words (ADR 0067): the share of a stem's impact a token held in its very form
    # adds, in 1/256 (0: none); the analyzer's terms of a token list, to find its stem.
    exact_weight: int = 0
    exact_coverage: int = 0  # the least coverage (1/256) at which exact words count
    stem: Callable[[list[str]], list[str]] | None = None
    # Whether the model holds a token whole, by token: a function of the model alone, so
    # remembering it cannot change a weight (cleared when WHOLE_MEMO are held).
    _whole: dict[str, bool] = field(default_factory=dict, init=False, repr=False,
                                    compare=False)
    # A token's stem and form bit (``exact_term``): a function of the index alone.
    _exact_terms: dict[str, tuple[int, int] | None] = field(
        default_factory=dict, init=False, repr=False, compare=False)

    def exact_term(self, token: str) -> tuple[int, int] | None:
        """``token``'s stem's term id and its form's bit, or None where it has no bit."""
        memo = self._exact_terms
        if token in memo:
            return memo[token]
        inverted = self.lexical.index
        bit = (inverted.form_bits or {}).get(token)
        stems = self.stem([token]) if bit is not None and self.stem is not None else []
        term = inverted.term_ids.get(stems[0]) if stems else None
        if len(memo) >= WHOLE_MEMO:
            memo.clear()
        found = memo[token] = None if term is None or bit is None else (term, bit)
        return found

    def held_whole(self, token: str) -> bool:
        """Whether the model's tokenizer encodes ``token`` as one token."""
        found = self._whole.get(token)
        if found is None:
            if len(self._whole) >= WHOLE_MEMO:
                self._whole.clear()
            found = self._whole[token] = len(self.model.tokenizer.ids(token)) == 1
        return found

    def for_texts(self, texts: Mapping[tuple[str, ...], str], budget: int = 0) -> HybridView:
        """The index for one request: ``texts`` gives the text behind each term tuple it
        will be asked about (its subqueries' and the whole query's); ``budget``, its recall
        budget, which sets both lists' depths where they follow it (``depth_floor``)."""
        depth = max(budget, self.depth_floor)
        return HybridView(self, texts, (depth, depth) if self.depth_floor
                          else (self.lexical_depth, self.semantic_depth))

    def score(self, terms: Sequence[str]) -> tuple[IntArray, IntArray]:
        raise ConfigError("a hybrid index ranks texts: use for_texts (core.engine does)")


@dataclass
class HybridView:
    """A hybrid index with the request's texts: a ``ScoringIndex`` over term tuples."""

    index: HybridIndex
    texts: Mapping[tuple[str, ...], str]
    depths: tuple[int, int]  # the lexical and the semantic list's, for this request
    _seen: dict[tuple[str, ...], tuple[IntArray, ...]] = field(default_factory=dict)
    _covers: dict[tuple[str, ...], int] = field(default_factory=dict)
    _ranks: dict[tuple[str, ...], tuple[list[int], list[int], list[int]]] = field(
        default_factory=dict)

    def score(self, terms: Sequence[str]) -> tuple[IntArray, IntArray]:
        ords, units, _, _, _ = self._fused(tuple(terms))
        return ords, units

    def account(self, terms: Sequence[str], ords: Sequence[int]) -> dict[str, Any]:
        """How ``terms`` were fused, for the audit: the semantic weight used and each of
        ``ords``' lexical and semantic ranks (0: not in that list)."""
        key = tuple(terms)
        ranks = self._ranks.get(key)
        if ranks is None:  # a one-part query's subquery and whole query share one
            fused_ords, _, lex, sem, _ = self._fused(key)
            ranks = self._ranks[key] = (fused_ords.tolist(), lex.tolist(), sem.tolist())
        # The fused documents ascend: a few picks are found by binary search, cheaper than
        # a dict of every fused document.
        listed, lex_ranks, sem_ranks = ranks
        out = []
        for o in ords:
            at = bisect_left(listed, o)
            found = at < len(listed) and listed[at] == o
            out.append([lex_ranks[at], sem_ranks[at]] if found else [0, 0])
        account: dict[str, Any] = {"semantic_weight": int(self._fused(key)[4][0])}
        if key in self._covers:  # an engine whose weight follows the coverage says it
            account["coverage"] = self._covers[key]
        account["ranks"] = out
        return account

    def _fused(self, terms: tuple[str, ...]) -> tuple[IntArray, ...]:
        found = self._seen.get(terms)
        if found is not None:
            return found
        ix = self.index
        lex = ix.lexical
        plan = lex.plan(terms)  # once, for the lexical list and the confidence rule
        ords, units = lex.scorer.score_top(plan, self.depths[0]) \
            if terms and self.depths[0] else EMPTY
        text = self.texts.get(terms)
        tokens = ix.tokens(text) if text is not None and ix.tokens is not None else None
        weight, cover = ix.semantic_weight, WHOLE
        if ix.steps and tokens is not None:
            cover = self._covers[terms] = coverage(tokens, ix.held_whole)
            weight = stepped_weight(cover, ix.steps)
        if ix.exact_weight and tokens is not None and len(ords) and cover >= ix.exact_coverage:
            units = units + self._exact(tokens, np.asarray(ords, np.int64))
        found = (self._one_call(plan, (ords, units), text, weight)
                 or self._steps(plan, (ords, units), text, weight))
        self._seen[terms] = found
        return found

    def _exact(self, tokens: list[str], ords: IntArray) -> IntArray:
        """Each of ``ords``' exact-word bonus: for each distinct one of ``tokens`` with a
        form bit that the document's posting of its stem has set, exact_weight of that
        posting's impact (>> 8)."""
        ix = self.index
        inverted = ix.lexical.index
        if inverted.forms is None:
            return np.zeros(len(ords), np.int64)
        named = [found for found in map(ix.exact_term, sorted(set(tokens))) if found]
        return exact_bonus(inverted.offsets, inverted.docs, inverted.forms, ix.lexical.impacts,
                           np.asarray([t for t, _ in named], np.int64),
                           np.asarray([b for _, b in named], np.int64), ords,
                           ix.exact_weight, fusion.WEIGHT_BITS)

    def _one_call(self, plan: Plan, candidates: tuple[IntArray, IntArray], text: str | None,
                  weight: int) -> tuple[IntArray, ...] | None:
        """``_steps`` in one compiled call (``semantic.lists.one_call``), or None."""
        ix = self.index
        lexical_depth, semantic_depth = self.depths
        ids = _NO_IDS
        if text is not None and semantic_depth and len(ix.vectors) and (
                weight or ix.confident_weight):
            ids = np.asarray(ix.model.tokenizer.ids(text), dtype=np.int64)
        sure = (*ix.lexical.scorer.lookup_args(plan), ix.confident_coverage, COVERAGE_BITS) \
            if ix.confident_coverage else None
        done = one_call(
            candidates, lexical_depth, sure,
            (ix.model.table, ids, np.ones(len(ids), np.int64) if ix.weights is None
             else ix.weights[ids]),
            (ix.vectors, ix.radii, ix.planes, ix.prefilter, semantic_depth),
            (ix.lexical_weight, weight, ix.confident_weight, ix.k))
        if done is None:
            return None
        return (*done[:4], np.asarray([done[4]], np.int64))

    def _steps(self, plan: Plan, candidates: tuple[IntArray, IntArray], text: str | None,
               weight: int) -> tuple[IntArray, ...]:
        """The fused list step by step: the reference ``_one_call`` is held to."""
        ix = self.index
        lexical_depth, semantic_depth = self.depths
        lexical = ranked(*candidates, lexical_depth)
        if ix.confident_coverage and len(lexical[0]) and self._sure(plan, lexical):
            weight = ix.confident_weight
        semantic = EMPTY
        if weight and semantic_depth and text is not None and len(ix.vectors):
            query = query_vector(ix.model, text, ix.weights)
            if query is not None:
                semantic = semantic_list(ix.vectors, ix.radii, ix.planes, query, ix.prefilter,
                                         semantic_depth)
        return (*fused(lexical, semantic, ix.lexical_weight, weight, ix.k),
                np.asarray([weight], np.int64))

    def _sure(self, plan: Plan, lexical: tuple[IntArray, IntArray]) -> bool:
        """Whether a document at lexical rank 1 matches at least the confident coverage
        of the distinct query terms (a term matches through any of its expansions)."""
        matched = self.index.lexical.scorer.matched_of(
            plan, np.sort(lexical[0][lexical[1] == 1]))
        return int(matched.max()) << COVERAGE_BITS >= len(plan) * self.index.confident_coverage
