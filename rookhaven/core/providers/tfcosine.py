"""Cosine similarity over raw term frequencies, computed exactly in integers (the reference).

cos = dot / sqrt(|q|^2 |d|^2). With integer counts, floor(2**32 * cos) is
isqrt((dot^2 << 64) // (|q|^2 |d|^2)): no float is ever rounded, so every platform agrees.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from math import isqrt
from typing import Any

import numpy as np

from ..analyzer import Analyzer
from ..corpus import RecordSource
from .base import IntArray, document_text

SCALE_BITS = 32


@dataclass(frozen=True)
class TfCosineIndex:
    """Postings of (ordinal, count) per term and each document's squared norm."""

    postings: dict[str, tuple[tuple[int, int], ...]]
    norms2: tuple[int, ...]
    analyzer: Analyzer

    def score(self, terms: Sequence[str]) -> tuple[IntArray, IntArray]:
        query = Counter(terms)
        q2 = sum(c * c for c in query.values())
        dots: dict[int, int] = {}
        for term in sorted(query):
            weight = query[term]
            for ordinal, count in self.postings.get(term, ()):
                dots[ordinal] = dots.get(ordinal, 0) + weight * count
        ords = sorted(dots)
        units = [isqrt((dots[o] * dots[o] << (2 * SCALE_BITS)) // (q2 * self.norms2[o]))
                 for o in ords]
        return np.asarray(ords, dtype=np.int64), np.asarray(units, dtype=np.int64)


@dataclass(frozen=True)
class TfCosineProvider:
    """The reference scorer: simple, exact, and the behaviour the golden files pin."""

    analyzer: Analyzer = field(default_factory=Analyzer)
    name: str = "tfcosine"
    version: str = "1"
    scale: int = 1 << SCALE_BITS
    merge: str = "max-subquery"
    # Put the exact parameters into config(), so an audit alone rebuilds this provider.
    record_parameters: bool = False

    def config(self) -> dict[str, Any]:
        config: dict[str, Any] = {"analyzer": self.analyzer.config()}
        if self.record_parameters:
            config["parameters"] = {"stopwords": self.analyzer.stopwords,
                                    "stemmer": self.analyzer.stemmer}
        return config

    def build(self, corpus: RecordSource) -> TfCosineIndex:
        postings: dict[str, list[tuple[int, int]]] = {}
        norms2: list[int] = []
        docs = (doc for chunk in corpus.record_chunks(1024) for doc in chunk)
        for ordinal, doc in enumerate(docs):
            counts = Counter(self.analyzer.terms(document_text(doc["fields"], doc["text"])))
            norms2.append(sum(c * c for c in counts.values()))
            for term, count in counts.items():
                postings.setdefault(term, []).append((ordinal, count))
        frozen = {term: tuple(postings[term]) for term in sorted(postings)}
        return TfCosineIndex(postings=frozen, norms2=tuple(norms2), analyzer=self.analyzer)
