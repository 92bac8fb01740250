"""Scoring providers: the semantics an engine version builds (see ``core/engines.py``)."""

from __future__ import annotations

from .base import ScoringIndex, ScoringProvider, TopKIndex
from .bm25 import Bm25Provider
from .tfcosine import TfCosineProvider

__all__ = ["Bm25Provider", "ScoringIndex", "ScoringProvider", "TfCosineProvider", "TopKIndex"]
