"""Exact BM25 term impacts: fixed-point integers computed once per posting at index time.

Decision (docs/adr/0004-exact-scoring.md): the only transcendental, the IDF logarithm, is
computed with ``decimal`` (its ``ln`` is specified digit for digit, so every platform gets
the same value), once per distinct document frequency. Everything else uses IEEE-754 basic
operations (+ - * /) elementwise, each correctly rounded by definition, then one ``floor``
to an integer number of ``1 / 2**SCALE_BITS`` units. Query scores are integer sums, so the
order in which terms or documents are added cannot change them.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from decimal import Context, Decimal

import numpy as np
import numpy.typing as npt

from ...errors import ConfigError
from ..index import WEIGHT_ONE, InvertedIndex

SCALE_BITS = 24
SCALE = 1 << SCALE_BITS
BLOCK = 1 << 18  # postings per block, bounding the float64 temporaries (~2 MB each)
# Impacts are int32: the largest a posting may have. A larger float converted to int32 is
# undefined (x86 gives -2**31, a negative score; ARM saturates), so it is refused instead.
MAX_UNITS = (1 << 31) - 1

_CONTEXT = Context(prec=40)


def idf(df: int, n_docs: int) -> float:
    """ln(1 + (N - df + 0.5) / (df + 0.5)), > 0 even when every document has the term."""
    ratio = _CONTEXT.divide(Decimal(2 * (n_docs - df) + 1), Decimal(2 * df + 1))
    return float(_CONTEXT.ln(_CONTEXT.add(Decimal(1), ratio)))


def idf_table(df: npt.NDArray[np.int64], n_docs: int) -> npt.NDArray[np.float64]:
    """IDF of every term, the logarithm taken once per distinct document frequency."""
    values, inverse = np.unique(df, return_inverse=True)
    table = np.asarray([idf(int(v), n_docs) for v in values.tolist()], dtype=np.float64)
    return table[inverse]


def length_factors(index: InvertedIndex, k1: float, b: float) -> npt.NDArray[np.float64]:
    """k1 * (1 - b + b * dl / avgdl) per document, from integer lengths."""
    total = int(index.lengths.sum())
    if total == 0:
        return np.full(index.n_docs, k1, dtype=np.float64)
    # dl / avgdl = dl * N / total: the product is an exact integer in float64 (< 2**53).
    ratio = index.lengths.astype(np.float64) * float(index.n_docs) / float(total)
    with np.errstate(over="ignore"):  # inf for a huge k1: fixed_point refuses what follows
        return k1 * ((1.0 - b) + b * ratio)


def term_impacts(index: InvertedIndex, k1: float, b: float,
                 term_idf: npt.NDArray[np.float64]) -> npt.NDArray[np.int32]:
    """floor(SCALE * idf * tf (k1 + 1) / (tf + K_d)), at least 1, for every posting."""
    norm = length_factors(index, k1, b)
    return fixed_point(index, term_idf, lambda tf, docs: tf * (k1 + 1.0) / (tf + norm[docs]))


def counts_beside_impacts(index: InvertedIndex) -> tuple[InvertedIndex, npt.NDArray[np.int32]]:
    """``index`` with its two-byte counts moved into the upper half of the array its impacts
    will fill (``fixed_point(..., out=)``), and that array.

    A provider that reads the counts once more after the index is built (the forward index,
    collection frequencies) would otherwise hold counts and impacts at once: 124 MB more
    than its resting size at 1M documents. The caller drops the index it passed in, reads
    the counts from the one returned, and writes the impacts over them last. Four-byte
    counts do not fit beside the impacts; they stay where they are.
    """
    room = np.empty(len(index.docs), dtype=np.int32)
    if index.tfs.dtype != np.uint16:
        return index, room
    tfs = room.view(np.uint16)[len(room):]
    tfs[:] = index.tfs
    return dataclasses.replace(index, tfs=tfs), room


def fixed_point(index: InvertedIndex, term_idf: npt.NDArray[np.float64],
                part: Callable[[npt.NDArray[np.float64], npt.NDArray[np.int32]],
                               npt.NDArray[np.float64]],
                out: npt.NDArray[np.int32] | None = None) -> npt.NDArray[np.int32]:
    """floor(SCALE * idf * part(tf, docs)), at least 1, for every posting, in blocks of
    postings (bounding the float64 temporaries); ``part`` is the term-frequency factor.

    ``out`` may hold the counts in its upper half (``counts_beside_impacts``): block
    ``[lo, hi)`` reads its counts before it writes bytes ``[4 lo, 4 hi)``, and the counts
    still unread start at byte ``2 n + 2 hi``, never below ``4 hi``.
    """
    if out is None:
        out = np.empty(len(index.docs), dtype=np.int32)
    for lo in range(0, len(out), BLOCK):
        hi = min(lo + BLOCK, len(out))
        first = int(np.searchsorted(index.offsets, lo, side="right")) - 1
        last = int(np.searchsorted(index.offsets, hi - 1, side="right")) - 1
        spans = (np.minimum(index.offsets[first + 1:last + 2], hi)
                 - np.maximum(index.offsets[first:last + 1], lo))
        term = np.repeat(np.arange(first, last + 1), spans)
        tf = index.tfs[lo:hi].astype(np.float64) / WEIGHT_ONE  # power-of-two division: exact
        # An overflow (a huge k1) ends as inf or NaN, refused below: no warning on stderr.
        with np.errstate(over="ignore", invalid="ignore"):
            units = np.floor(term_idf[term] * part(tf, index.docs[lo:hi]) * SCALE)
        top = float(units.max(initial=0.0))
        if not top <= MAX_UNITS:  # NaN too
            found = f"an impact of {top / SCALE:.4g}" if top == top else "no finite impact"
            raise ConfigError(
                f"these engine parameters give a term on this corpus {found}, above the "
                f"{MAX_UNITS / SCALE:.4g} that exact scores can hold: lower k1 (the idf of the "
                "corpus's rarest term times k1 + 1, plus delta, must stay below it)")
        out[lo:hi] = np.maximum(units, 1).astype(np.int32)
    return out


def capped_weight(weight: int, bits: int, idf_variant: float, idf_reference: float | None) -> int:
    """``weight`` (in 1/2**bits) times min(1, idf_reference / idf_variant), at least 1.

    A prefix or synonym match is scored with its own impact, but never above what the
    query term's own IDF would give it: a rare extension must not outweigh the term.
    """
    if idf_reference is None or idf_reference >= idf_variant:
        return weight
    # IEEE /, exact *2**k; math.floor of a finite float is exactly np.floor's integer (every
    # IDF is positive, so the quotient is finite), without numpy scalar overhead.
    ratio = math.floor(idf_reference / idf_variant * (1 << bits))
    return max((weight * ratio) >> bits, 1)
