"""Whether a query's feedback pass runs: a query-performance predictor in exact integers.

Pseudo-relevance feedback pays where the first pass finds a coherent set of long documents
and nothing stands out (an ad hoc need); it costs where a short document already answers
(a tool name, a title). The predictor reads only integers the first pass gives, so the
decision is as reproducible as a score, and the audit records its inputs (ADR 0024):

1. the collection: the mean field-weighted document length, in 1/16 tokens, against
   ``min_length``; below it no query of the collection is expanded and no first pass runs;
2. the query: at least ``fb_docs`` documents must match;
3. the first pass's score gap: the best score at most ``max_gap`` times the ``fb_docs``-th
   (in 1/256); a best document that far ahead is taken as the answer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

GAP_BITS = 8  # max_gap in 1/256
LENGTH_ONE = 16  # index lengths count 1/16 of a token


@dataclass(frozen=True)
class FeedbackPredictor:
    """The thresholds; ``max_gap`` 0 means no gap limit."""

    min_length: int  # mean document length, tokens
    max_gap: int  # top / k-th score, in 1/2**GAP_BITS; 0: unlimited
    fb_docs: int

    def collection_allows(self, mean_length16: int) -> bool:
        """Whether documents this long (mean, 1/16 tokens) are worth a feedback pass."""
        return mean_length16 >= self.min_length * LENGTH_ONE

    def decide(self, mean_length16: int, first: list[int]) -> dict[str, Any]:
        """The decision and its inputs, given the first pass's best scores (descending, at
        most ``fb_docs``); ``first`` is empty when the collection rule already refused."""
        inputs: dict[str, Any] = {"mean_length16": mean_length16}
        if not self.collection_allows(mean_length16):
            return {"run": False, "reason": "short-documents", "inputs": inputs}
        inputs["matched"] = len(first)
        if len(first) < self.fb_docs:
            return {"run": False, "reason": "few-matches", "inputs": inputs}
        top, kth = first[0], first[-1]
        inputs["top"], inputs["kth"] = top, kth
        if self.max_gap and top << GAP_BITS > kth * self.max_gap:
            return {"run": False, "reason": "clear-winner", "inputs": inputs}
        return {"run": True, "reason": "ad-hoc", "inputs": inputs}

    def config(self) -> dict[str, Any]:
        """The rule as recorded in every audit's config."""
        return {"min_length": self.min_length, "max_gap": self.max_gap,
                "gap_unit": f"1/{1 << GAP_BITS}", "length_unit": f"1/{LENGTH_ONE} token",
                "rule": "mean_length16 >= 16*min_length and matched >= fb_docs and "
                        "(max_gap = 0 or top*256 <= kth*max_gap)"}
