"""bm25@3's semantics: bm25@2's BM25F with a lower-bounded tf and pseudo-relevance feedback.

A query's terms are scored as in ``Bm25Provider`` (prefixes, synonyms, coverage); then the
``fb_docs`` best documents of that first pass choose ``fb_terms`` expansion terms (RM3 or
Bo1, ``feedback.py``), and the second pass scores the query with integer weights in
1/4096: the query's share ``original_weight`` and the feedback terms' the rest. The
feedback documents and every weight go into the audit (``explain``). ``feedback_scope``
says whether each subquery is expanded or only the whole query, which orders the merge.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from ...errors import ConfigError
from ..corpus import RecordSource
from ..index import InvertedIndex, build_index
from .base import IntArray
from .bm25 import COVERAGE_BITS, Bm25Index, Bm25Provider, _fraction
from .feedback import (
    FEEDBACK,
    WEIGHT_BITS,
    ForwardIndex,
    bo1_tables,
    bo1_weights,
    collection_frequencies,
    eligible_terms,
    forward_index,
    interpolate,
    rm3_weights,
)
from .impacts import SCALE, SCALE_BITS, counts_beside_impacts, idf_table
from .lowerbound import TF_BOUNDS, bounded_impacts
from .scoring import Plan

SCOPES = ("whole-query", "subquery")
FRACTION_BITS = 16  # original_weight and fb_max_df are recorded in 1/65536
FEEDBACK_MEMO = 1024  # distinct term multisets whose feedback plan an index remembers


@dataclass(frozen=True)
class Bm25PrfProvider(Bm25Provider):
    """BM25F (bm25@2's plan) with ``tf_bound`` and feedback; exact integers throughout."""

    # Defaults chosen leaving one collection out at a time (docs/ranking.md, bench/tune.py).
    tf_bound: str = "bm25+"
    delta: float = 0.25
    feedback: str = "bo1"
    fb_docs: int = 10
    fb_terms: int = 10
    original_weight: float = 0.7
    fb_max_df: float = 0.1
    feedback_scope: str = "subquery"

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.tf_bound not in TF_BOUNDS:
            raise ConfigError(f"unknown tf_bound {self.tf_bound!r}; choose one of: "
                              f"{', '.join(TF_BOUNDS)}")
        if self.feedback not in FEEDBACK:
            raise ConfigError(f"unknown feedback {self.feedback!r}; choose one of: "
                              f"{', '.join(FEEDBACK)}")
        if self.feedback_scope not in SCOPES:
            raise ConfigError(f"unknown feedback_scope {self.feedback_scope!r}; choose one "
                              f"of: {', '.join(SCOPES)}")
        if not 0.0 <= self.delta <= 2.0:
            raise ConfigError(f"delta must be between 0 and 2, got {self.delta!r}")
        if not 1 <= self.fb_docs <= 100 or not 1 <= self.fb_terms <= 100:
            raise ConfigError("fb_docs and fb_terms must be between 1 and 100, got "
                              f"{self.fb_docs} and {self.fb_terms}")
        for name in ("original_weight", "fb_max_df"):
            _fraction(name, getattr(self, name), FRACTION_BITS)
        if self.feedback != "none":  # weighted queries: scores in 1/2**(24+12)
            object.__setattr__(self, "scale", 1 << (SCALE_BITS + WEIGHT_BITS))

    def parameters(self) -> dict[str, Any]:
        return {**super().parameters(), "tf_bound": self.tf_bound, "delta": self.delta,
                "feedback": self.feedback, "fb_docs": self.fb_docs, "fb_terms": self.fb_terms,
                "original_weight": self.original_weight, "fb_max_df": self.fb_max_df,
                "feedback_scope": self.feedback_scope}

    def config(self) -> dict[str, Any]:
        config = super().config()
        params = config.pop("parameters", None)
        config["tf_bound"] = {
            "none": "none", "bm25+": "idf*(tf(k1+1)/(tf+k1*L)+delta)",
            "bm25l": "idf*(k1+1)(tf/L+delta)/(k1+tf/L+delta)"}[self.tf_bound]
        config["delta"] = self.delta
        config["feedback"] = {
            "method": self.feedback, "fb_docs": self.fb_docs, "fb_terms": self.fb_terms,
            "original_weight": _fraction("original_weight", self.original_weight,
                                         FRACTION_BITS),
            "fb_max_df": _fraction("fb_max_df", self.fb_max_df, FRACTION_BITS),
            "fraction_unit": f"1/{1 << FRACTION_BITS}", "weight_unit": f"1/{1 << WEIGHT_BITS}",
            "scope": self.feedback_scope, "first_pass_ties": "ordinal",
            "term_length": "2..20",
        }
        config["scale_bits"] = self.scale.bit_length() - 1
        if params is not None:
            config["parameters"] = params
        return config

    def build(self, corpus: RecordSource) -> Bm25PrfIndex:
        return Bm25PrfIndex(**self._index_parts(self._counted(corpus),
                                                feedback=self.feedback != "none"))

    def _counted(self, corpus: RecordSource) -> tuple[InvertedIndex, Any]:
        """The index of ``corpus`` with room for the impacts beside its counts."""
        return counts_beside_impacts(build_index(corpus, self.analyzer, self.field_weights))

    def _index_parts(self, counted: tuple[InvertedIndex, Any], *,
                     feedback: bool) -> dict[str, Any]:
        """The fields of this provider's index; ``feedback``: build what feedback reads."""
        # Every reader of the counts runs before the impacts are written over them.
        index, room = counted
        term_idf = idf_table(index.df(), index.n_docs)
        forward: ForwardIndex | None = None
        eligible = np.zeros(0, dtype=bool)
        tables = (np.zeros(0), np.zeros(0))
        if feedback:
            eligible = eligible_terms(index, _fraction("fb_max_df", self.fb_max_df,
                                                       FRACTION_BITS), FRACTION_BITS)
            forward = forward_index(index, eligible)
            if self.feedback == "bo1":
                tables = bo1_tables(collection_frequencies(index), index.n_docs)
        delta = self.delta if self.tf_bound != "none" else 0.0
        impacts = bounded_impacts(index, self.k1, self.b, term_idf, self.tf_bound, delta,
                                  out=room)
        index = dataclasses.replace(index, tfs=np.zeros(0, dtype=np.int32))
        return dict(
            index=index, impacts=impacts, term_idf=term_idf.tolist(),
            prefix_weight=_fraction("prefix_weight", self.prefix_weight, 16),
            prefix_min_len=self.prefix_min_len, prefix_max_terms=self.prefix_max_terms,
            synonym_weight=_fraction("synonym_weight", self.synonym_weight, 16),
            synonyms=self._synonyms,
            coverage=_fraction("coverage", self.coverage, COVERAGE_BITS),
            forward=forward, eligible=eligible, bo1=tables, method=self.feedback,
            fb_docs=self.fb_docs, fb_terms=self.fb_terms,
            original=_fraction("original_weight", self.original_weight, WEIGHT_BITS),
            scope=self.feedback_scope)


@dataclass(frozen=True)
class Feedback:
    """One query's feedback: the first-pass documents, the weighted plan, what it means."""

    docs: tuple[int, ...]
    plan: Plan
    terms: tuple[tuple[str, int, str], ...]  # (term, weight in 1/4096, from)
    decision: dict[str, Any] | None = None  # bm25@4: the predictor's, with its inputs


@dataclass
class Bm25PrfIndex(Bm25Index):
    """A ``Bm25Index`` whose ``score``/``top``/``score_of`` use the feedback plan."""

    forward: ForwardIndex | None = None
    eligible: npt.NDArray[np.bool_] = field(default_factory=lambda: np.zeros(0, dtype=bool))
    bo1: tuple[Any, Any] = (None, None)
    method: str = "none"
    fb_docs: int = 10
    fb_terms: int = 10
    original: int = 1 << (WEIGHT_BITS - 1)
    scope: str = "whole-query"
    # A term multiset's feedback depends only on this index, fixed once built.
    _feedback: dict[tuple[str, ...], Feedback] = field(default_factory=dict, init=False,
                                                      repr=False, compare=False)

    def base_plan(self, terms: Sequence[str]) -> Plan:
        """bm25@2's plan: each distinct term's count and expansion."""
        return Bm25Index.plan(self, terms)

    def feedback_of(self, terms: Sequence[str]) -> Feedback:
        """The feedback of ``terms`` (remembered for the last ``FEEDBACK_MEMO`` multisets)."""
        key = tuple(sorted(terms))
        found = self._feedback.get(key)
        if found is None:
            if len(self._feedback) >= FEEDBACK_MEMO:
                del self._feedback[next(iter(self._feedback))]
            found = self._feedback[key] = self._compute(key)
        return found

    def _compute(self, terms: tuple[str, ...]) -> Feedback:
        base = self.base_plan(terms)
        if self.forward is None or not base:
            return Feedback(docs=(), plan=base, terms=())
        docs, scores = self.first_pass(base)
        return self.weighted(terms, base, docs, self.chosen(docs, scores))

    def first_pass(self, base: Plan) -> tuple[list[int], list[int]]:
        """The ``fb_docs`` best documents of the unexpanded plan and their scores."""
        ords, units = self.scorer.score_top(base, self.fb_docs)
        # Score descending, then ordinal; a handful of candidates, so Python's sort (numpy's
        # calls cost more than the sorting here).
        first = sorted(zip(units.tolist(), ords.tolist(), strict=True),
                       key=lambda pair: (-pair[0], pair[1]))[: self.fb_docs]
        return [ordinal for _, ordinal in first], [score for score, _ in first]

    def chosen(self, docs: list[int], scores: list[int]) -> dict[int, int]:
        """The expansion terms the feedback documents choose (term id -> weight)."""
        assert self.forward is not None
        if self.method == "rm3":
            return rm3_weights(self.forward, self.eligible, docs, scores, self.fb_terms)
        return bo1_weights(self.forward, self.eligible, self.bo1, docs, self.fb_terms)

    def weighted(self, terms: tuple[str, ...], base: Plan, docs: list[int],
                 chosen: dict[int, int]) -> Feedback:
        """The query's plan with ``chosen`` mixed in (none: its normalised counts alone)."""
        counts = Counter(terms)
        distinct = sorted(counts)
        ids = self.index.term_ids
        # A query term's key is its own term id, so feedback on that term adds to it; a term
        # not indexed gets a negative key of its own.
        keys = [ids.get(t, -1 - i) for i, t in enumerate(distinct)]
        weights = interpolate({k: counts[t] for k, t in zip(keys, distinct, strict=True)},
                              chosen, self.original)
        plan: Plan = []
        shown: list[tuple[str, int, str]] = []
        for key, term, (_, expansion) in zip(keys, distinct, base, strict=True):
            weight = weights.get(key, 0)
            if weight:
                plan.append((weight, expansion))
                shown.append((term, weight, "query+feedback" if key in chosen else "query"))
        one = 1 << 16
        vocabulary = self.index.vocabulary
        for key in sorted(set(chosen) - set(keys)):
            weight = weights.get(key, 0)
            if weight:
                plan.append((weight, ((key, one),)))
                shown.append((vocabulary[key], weight, "feedback"))
        return Feedback(docs=tuple(docs), plan=plan, terms=tuple(shown))

    def plan(self, terms: Sequence[str]) -> Plan:
        return self.feedback_of(terms).plan

    def explain(self, terms: Sequence[str]) -> dict[str, Any] | None:
        """What the audit records of ``terms``' feedback, ordinals for the engine to name; with
        a predictor (bm25@4), its decision and inputs too."""
        if self.method == "none":  # bm25@3 builds a forward index exactly when it expands
            return None
        fb = self.feedback_of(terms)
        unit = 1 << WEIGHT_BITS
        account: dict[str, Any] = {
            "method": self.method, "feedback_docs": list(fb.docs),
            "terms": [{"term": t, "weight": w / unit, "from": f} for t, w, f in fb.terms]}
        if fb.decision is not None:
            account["predictor"] = fb.decision
        return account

    def subquery_index(self) -> Bm25PrfIndex | _Unexpanded:
        """What ranks a subquery: this index, or with whole-query scope the first pass."""
        return self if self.scope == "subquery" or self.forward is None else _Unexpanded(self)


@dataclass(frozen=True)
class _Unexpanded:
    """The first-pass (unexpanded) scoring of a ``Bm25PrfIndex``, in its scale."""

    of: Bm25PrfIndex

    def _plan(self, terms: Sequence[str]) -> Plan:
        counts = Counter(terms)
        # The same units as the expanded plan: the query's counts normalised to 1/4096.
        keys = {t: i for i, t in enumerate(sorted(counts))}
        weights = interpolate({keys[t]: counts[t] for t in keys}, {}, self.of.original)
        return [(weights[keys[t]], e) for t, (_, e) in
                zip(sorted(counts), self.of.base_plan(terms), strict=True) if keys[t] in weights]

    def score(self, terms: Sequence[str]) -> tuple[IntArray, IntArray]:
        return self.of.scorer.score_all(self._plan(terms))

    def top(self, terms: Sequence[str], k: int) -> tuple[IntArray, IntArray]:
        return self.of.scorer.score_top(self._plan(terms), k)

    def score_of(self, terms: Sequence[str], ords: IntArray) -> IntArray:
        return self.of.scorer.score_docs(self._plan(terms), ords)


__all__ = ["SCALE", "Bm25PrfIndex", "Bm25PrfProvider"]
