"""Bulk re-ranking: replay historical queries against a new corpus or engine and report
what changed (overlap at k, gains, losses, displacement, Kendall's tau, RBO)."""

from .models import RerankRow, RerankSpec, RerankSummary
from .runner import Reranker, check_target, run_id_for, summarize

__all__ = ["RerankRow", "RerankSpec", "RerankSummary", "Reranker", "check_target",
           "run_id_for", "summarize"]
