"""Effectiveness evaluation: BEIR collections in, metrics and TREC runs out."""

from .beir import Collection, load_collection, read_split
from .metrics import METRICS, evaluate_run
from .run import RunResult, run_collection, write_trec_run

__all__ = ["METRICS", "Collection", "RunResult", "evaluate_run", "load_collection",
           "read_split", "run_collection", "write_trec_run"]
