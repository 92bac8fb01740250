"""The scoring-provider contract: build an index once per corpus, score term lists as integers.

Scores are non-negative integers in units of ``1 / scale`` so that adding, comparing and
merging them is exact on every machine; the float shown to users is ``units / scale`` with
``scale`` a power of two, which is exact too.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from ..analyzer import Analyzer
from ..corpus import RecordSource

IntArray = npt.NDArray[np.int64]


class ScoringIndex(Protocol):
    """A corpus prepared for scoring."""

    def score(self, terms: Sequence[str]) -> tuple[IntArray, IntArray]:
        """Ordinals of the documents that match any of ``terms`` and their integer scores."""
        ...


@runtime_checkable
class TopKIndex(ScoringIndex, Protocol):
    """An index that can cut the ranking short; both methods give exactly the integers a
    full ``score`` would, so using them changes speed, never bytes."""

    def top(self, terms: Sequence[str], k: int) -> tuple[IntArray, IntArray]:
        """Every document scoring at least the ``k``-th best score (ties included)."""
        ...

    def score_of(self, terms: Sequence[str], ords: IntArray) -> IntArray:
        """The score of each document of ``ords`` (ascending) under ``terms``; 0: no match."""
        ...


class ScoringProvider(Protocol):
    """A named, versioned scoring semantics with the parameters that change its scores."""

    @property
    def name(self) -> str: ...
    @property
    def version(self) -> str: ...
    @property
    def scale(self) -> int:
        """Units per 1.0 of score; a power of two so ``units / scale`` is exact."""
        ...
    @property
    def analyzer(self) -> Analyzer: ...
    @property
    def merge(self) -> str:
        """How merged picks are ordered: ``max-subquery`` or ``whole-query``."""
        ...

    def config(self) -> dict[str, Any]:
        """Every parameter that changes a score, JSON-ready; hashed into the config digest."""
        ...

    def build(self, corpus: RecordSource) -> ScoringIndex:
        """Index ``corpus``; the result must not depend on dict or set iteration order."""
        ...


def document_text(fields: dict[str, str], text: str) -> str:
    """A document's fields (in name order) and body joined, for providers without field weights."""
    return "\n".join([*(fields[name] for name in sorted(fields)), text])
