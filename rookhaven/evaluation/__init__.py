"""Effectiveness evaluation: BEIR collections in, metrics and TREC runs out."""

from .beir import (
    UNLABELLED,
    Collection,
    collection_genre,
    load_collection,
    read_metadata,
    read_split,
)
from .metrics import METRICS, evaluate_run
from .run import RunResult, check_trec_ids, run_collection, write_trec_run

__all__ = ["METRICS", "UNLABELLED", "Collection", "RunResult", "check_trec_ids",
           "collection_genre", "evaluate_run", "load_collection", "read_metadata", "read_split",
           "run_collection", "write_trec_run"]
