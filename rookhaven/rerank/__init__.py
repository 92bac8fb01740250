"""Bulk re-ranking: replay historical queries against a new corpus or engine and report
what changed (overlap at k, gains, losses, displacement, Kendall's tau, RBO)."""

from .models import RerankRow, RerankSpec, RerankSummary
from .runner import Reranker, run_id_for, summarize

__all__ = ["RerankRow", "RerankSpec", "RerankSummary", "Reranker", "run_id_for",
           "summarize"]
