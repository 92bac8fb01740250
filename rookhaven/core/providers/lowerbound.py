"""Lower-bounded term frequency (BM25+, BM25L) as exact integer impacts, one per posting.

Same recipe as ``impacts.term_impacts`` (ADR 0004): the IDF from ``decimal``, IEEE basic
operations elementwise in a fixed order, one floor. ``delta`` lifts every match above what
a long document's saturated term frequency would otherwise fall to (Lv and Zhai, CIKM 2011):

    bm25+  idf * (tf (k1 + 1) / (tf + k1 L) + delta)
    bm25l  idf * (k1 + 1) (c + delta) / (k1 + c + delta),  c = tf / L
    L      = 1 - b + b dl / avgdl
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from ..index import InvertedIndex
from .impacts import fixed_point

TF_BOUNDS = ("none", "bm25+", "bm25l")


def length_ratios(index: InvertedIndex, b: float) -> npt.NDArray[np.float64]:
    """1 - b + b * dl / avgdl per document, from integer lengths (dl / avgdl = dl N / total)."""
    total = int(index.lengths.sum())
    if total == 0:
        return np.ones(index.n_docs, dtype=np.float64)
    ratio = index.lengths.astype(np.float64) * float(index.n_docs) / float(total)
    return (1.0 - b) + b * ratio


def saturated(tf: npt.NDArray[np.float64], lengths: npt.NDArray[np.float64], k1: float,
              bound: str, delta: float) -> npt.NDArray[np.float64]:
    """The term-frequency part of the impact (without the IDF), elementwise."""
    if bound == "bm25l":
        c = tf / lengths
        return (k1 + 1.0) * (c + delta) / ((k1 + c) + delta)
    plain = tf * (k1 + 1.0) / (tf + k1 * lengths)
    return plain + delta if bound == "bm25+" else plain


def bounded_impacts(index: InvertedIndex, k1: float, b: float,
                    term_idf: npt.NDArray[np.float64], bound: str,
                    delta: float, out: npt.NDArray[np.int32] | None = None,
                    ) -> npt.NDArray[np.int32]:
    """floor(SCALE * idf * saturated(tf)), at least 1, for every posting, in blocks; into
    ``out`` if given (``impacts.fixed_point``)."""
    lengths = length_ratios(index, b)
    return fixed_point(index, term_idf,
                       lambda tf, docs: saturated(tf, lengths[docs], k1, bound, delta), out)
