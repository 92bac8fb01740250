"""bm25@4's semantics: bm25@3 with feedback only where a predictor expects it to pay.

Each (sub)query's feedback pass runs only when ``FeedbackPredictor`` says so (collection
length, matches, first-pass score gap); otherwise the query is ranked by its own terms in
the same units. The decision and its inputs go into the audit. Identifiers are split
(``Analyzer(identifiers="split")``) and tool catalogs' fields have weights of their own.
See docs/adr/0024-bm25-4-and-the-default-rule.md.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from ...errors import ConfigError
from ..corpus import RecordSource
from ..index import InvertedIndex
from .bm25prf import Bm25PrfIndex, Bm25PrfProvider, Feedback
from .predictor import GAP_BITS, FeedbackPredictor

# A tool's name and a document's title are its strongest evidence; parameters and the body
# count once. Chosen leaving a genre out (docs/ranking.md); multiples of 1/16.
SELECTIVE_FIELD_WEIGHTS = {"title": 3.0, "name": 3.0, "keywords": 1.5, "parameters": 1.0,
                           "text": 1.0}


def mean_length16(index: InvertedIndex) -> int:
    """The mean field-weighted document length, in 1/16 tokens (0 for an empty corpus)."""
    return int(index.lengths.sum()) // index.n_docs if index.n_docs else 0


@dataclass(frozen=True)
class Bm25SelectiveProvider(Bm25PrfProvider):
    """bm25@3's ranking with a feedback predictor; parameters chosen leaving a genre out."""

    # Defaults chosen on the whole tuning set (bench/tune.py folds; docs/ranking.md).
    tf_bound: str = "none"
    field_weights: Any = field(default_factory=lambda: dict(SELECTIVE_FIELD_WEIGHTS))
    fb_min_length: int = 0
    fb_max_gap: float = 1.5

    def __post_init__(self) -> None:
        super().__post_init__()
        if not 0 <= self.fb_min_length <= 1 << 20:
            raise ConfigError(f"fb_min_length must be between 0 and {1 << 20} tokens, got "
                              f"{self.fb_min_length!r}")
        if not (self.fb_max_gap == 0 or 1.0 <= self.fb_max_gap <= 1000.0):
            raise ConfigError(f"fb_max_gap must be 0 (no limit) or between 1 and 1000, got "
                              f"{self.fb_max_gap!r}")

    @property
    def predictor(self) -> FeedbackPredictor:
        return FeedbackPredictor(min_length=self.fb_min_length,
                                 max_gap=round(self.fb_max_gap * (1 << GAP_BITS)),
                                 fb_docs=self.fb_docs)

    def parameters(self) -> dict[str, Any]:
        return {**super().parameters(), "identifiers": self.analyzer.identifiers,
                "fb_min_length": self.fb_min_length, "fb_max_gap": self.fb_max_gap}

    def config(self) -> dict[str, Any]:
        config = super().config()
        config["feedback"]["predictor"] = self.predictor.config()
        return config

    def build(self, corpus: RecordSource) -> Bm25SelectiveIndex:
        counted = self._counted(corpus)
        mean = mean_length16(counted[0])
        predictor = self.predictor
        # A collection the predictor refuses never expands: no forward index to hold.
        parts = self._index_parts(counted, feedback=self.feedback != "none"
                                  and predictor.collection_allows(mean))
        return Bm25SelectiveIndex(**parts, predictor=predictor, mean_length16=mean)


@dataclass
class Bm25SelectiveIndex(Bm25PrfIndex):
    """A ``Bm25PrfIndex`` whose feedback runs where its predictor says."""

    predictor: FeedbackPredictor = field(
        default_factory=lambda: FeedbackPredictor(min_length=0, max_gap=0, fb_docs=10))
    mean_length16: int = 0

    def _compute(self, terms: tuple[str, ...]) -> Feedback:
        base = self.base_plan(terms)
        if not base:
            return Feedback(docs=(), plan=base, terms=())
        # No forward index: the collection rule refused, and no first pass is worth running.
        docs, scores = self.first_pass(base) if self.forward is not None else ([], [])
        decision = self.predictor.decide(self.mean_length16, scores)
        if not decision["run"]:
            docs = []
        found = self.weighted(terms, base, docs, self.chosen(docs, scores) if docs else {})
        return dataclasses.replace(found, decision=decision)
