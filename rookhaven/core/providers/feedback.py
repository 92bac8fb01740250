"""Pseudo-relevance feedback in exact integers: RM3 (as Anserini's) and DFR Bo1 term choice.

Given the best documents of a first retrieval, each method picks ``fb_terms`` expansion
terms with a non-negative integer weight; ``interpolate`` mixes them with the query as
``w = a * qtf / |q| + (1 - a) * raw / sum(raw)`` and floors once, in ``WEIGHT_BITS`` units.
Every ordering has an explicit key (weight descending, then term id), so no tie depends on
a sort's stability; all arithmetic on weights is Python integers.

RM3 follows Anserini's ``Rm3Reranker``: per feedback document, its eligible terms pruned to
the ``fb_terms`` most frequent, each weighted tf / (the pruned vector's L1 norm) times the
document's first-pass score; summed over documents, pruned to ``fb_terms``, L1-normalised.
Bo1 follows Amati's divergence from randomness (as Terrier's Bo1):
``w = tfx log2((1 + Pn) / Pn) + log2(1 + Pn)``, ``Pn = F / N``, with ``tfx`` the term's
frequency in the feedback documents and ``F`` in the collection; the logarithms are taken
with ``decimal`` once per distinct collection frequency.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Context, Decimal
from typing import Any

import numpy as np
import numpy.typing as npt

from ..compiled import live, njit
from ..index import WEIGHT_ONE, InvertedIndex
from .impacts import BLOCK

FEEDBACK = ("none", "rm3", "bo1")
WEIGHT_BITS = 12  # query-term weights in 1/4096: sums times coverage stay below 2**63
BO1_BITS = 20  # Bo1 weights are floored to 1/2**20 before any comparison
MIN_TERM_LEN, MAX_TERM_LEN = 2, 20  # Anserini's bounds on a feedback term's length

_ONE_BITS = WEIGHT_ONE.bit_length() - 1  # a count of 1.0 is 1 << _ONE_BITS units
_CONTEXT = Context(prec=40)


@dataclass(frozen=True)
class ForwardIndex:
    """Each document's terms (ascending id, uint16 where the vocabulary allows; those it was
    built to keep) and field-weighted counts (1/16 units), stored as ``count >> shift``:
    one byte each where every kept count shares ``shift`` low zero bits and then fits
    (``_count_form``), else in the inverted index's own type with ``shift`` 0. Sums and
    negations are taken in int64."""

    offsets: npt.NDArray[np.int64]
    terms: npt.NDArray[Any]  # uint16 or int32
    tfs: npt.NDArray[Any]  # uint8, or as InvertedIndex.tfs (uint16 or int32)
    shift: int = 0

    def vector(self, ordinal: int) -> tuple[npt.NDArray[Any], npt.NDArray[Any]]:
        """The document's term ids and counts (1/16 units, whatever the stored form)."""
        lo, hi = int(self.offsets[ordinal]), int(self.offsets[ordinal + 1])
        tfs = self.tfs[lo:hi]
        return self.terms[lo:hi], (tfs.astype(np.int64) << self.shift if self.shift else tfs)


def _term_type(vocabulary: int) -> type:
    """The narrowest type of the forward index's term ids: uint16 where every id fits."""
    return np.uint16 if vocabulary <= 1 << 16 else np.int32


def _count_form(dtype: Any, top: int, bits: int) -> tuple[Any, int]:
    """The stored type and shift of counts whose largest is ``top`` and whose OR is ``bits``.

    With every field weight 1.0 each count is a multiple of 16; shifted by their common low
    zero bits (at most 4, so that 1/16 units stay a whole number of stored units) such
    counts up to 255 occurrences take one byte: 45 MB less at 1M synthetic documents."""
    shift = min((bits & -bits).bit_length() - 1, _ONE_BITS) if bits else _ONE_BITS
    return (np.uint8, shift) if top >> shift <= 0xFF else (dtype, 0)


def forward_index(index: InvertedIndex,
                  keep: npt.NDArray[np.bool_] | None = None) -> ForwardIndex:
    """The postings transposed, each document's term ids ascending, of the terms ``keep``
    marks (all without it): a counting sort (compiled if numba is here) that allocates the
    result and a cursor per document only.

    Feedback reads only eligible terms, so its index leaves the others out, and term ids
    take two bytes where they fit: the same choices from about half the memory on the
    synthetic corpora (ADR 0018, addendum 3)."""
    kept = np.ones(len(index.offsets) - 1, dtype=np.bool_) if keep is None else keep
    if _tally_kernel is None or _fill_kernel is None or not live():
        return forward_reference(index, kept)
    df = np.diff(index.offsets)
    offsets = np.zeros(index.n_docs + 1, dtype=np.int64)
    top, bits = _tally_kernel(index.offsets, index.docs, index.tfs, kept, offsets)
    dtype, shift = _count_form(index.tfs.dtype, int(top), int(bits))
    size = int(offsets[-1])
    terms: npt.NDArray[Any] = np.empty(size, dtype=_term_type(len(df)))
    tfs = np.empty(size, dtype=dtype)
    _fill_kernel(index.offsets, index.docs, index.tfs, kept, offsets, terms, tfs, shift)
    return ForwardIndex(offsets=offsets, terms=terms, tfs=tfs, shift=shift)


def forward_reference(index: InvertedIndex,
                      keep: npt.NDArray[np.bool_] | None = None) -> ForwardIndex:
    """The transposition in numpy calls (a stable sort by document keeps term ids ascending):
    the reference the compiled path is tested against, ~3x the result's memory at its peak."""
    df = np.diff(index.offsets)
    kept = np.ones(len(df), dtype=np.bool_) if keep is None else keep
    terms: npt.NDArray[Any] = np.repeat(np.arange(len(df), dtype=_term_type(len(df))), df)
    chosen = np.repeat(kept, df)
    terms, docs, tfs = terms[chosen], index.docs[chosen], index.tfs[chosen]
    order = np.argsort(docs, kind="stable")
    offsets = np.zeros(index.n_docs + 1, dtype=np.int64)
    np.cumsum(np.bincount(docs, minlength=index.n_docs), out=offsets[1:])
    wide = tfs.astype(np.int64)
    dtype, shift = _count_form(index.tfs.dtype, int(wide.max(initial=0)),
                               int(np.bitwise_or.reduce(wide, initial=0)))
    return ForwardIndex(offsets=offsets, terms=terms[order],
                        tfs=(wide[order] >> shift).astype(dtype), shift=shift)


def _tally(postings: Any, docs: Any, tfs: Any, keep: Any, offsets: Any) -> tuple[Any, Any]:
    """Each document's postings of kept terms counted into ``offsets`` (then summed into
    bounds); the largest kept count and the OR of them all, for ``_count_form``."""
    top = np.int64(0)
    bits = np.int64(0)
    for t in range(len(postings) - 1):
        if keep[t]:
            for p in range(postings[t], postings[t + 1]):
                offsets[docs[p] + 1] += 1
                count = np.int64(tfs[p])
                top = max(top, count)
                bits |= count
    for d in range(len(offsets) - 1):
        offsets[d + 1] += offsets[d]
    return top, bits


def _fill(postings: Any, docs: Any, tfs: Any, keep: Any, offsets: Any, out_terms: Any,
          out_tfs: Any, shift: int) -> None:
    """The kept terms taken in ascending id, each posting put in its document's next free
    slot (bounds from ``_tally``): every document's terms arrive ascending, as the stable
    sort orders them."""
    cursor = offsets[:-1].copy()
    for t in range(len(postings) - 1):
        if not keep[t]:
            continue
        for p in range(postings[t], postings[t + 1]):
            d = docs[p]
            at = cursor[d]
            out_terms[at] = t
            out_tfs[at] = np.int64(tfs[p]) >> shift
            cursor[d] = at + 1


_tally_kernel = njit(cache=True, nogil=True)(_tally) if njit is not None else None
_fill_kernel = njit(cache=True, nogil=True)(_fill) if njit is not None else None


def eligible_terms(index: InvertedIndex, max_df: int, bits: int) -> npt.NDArray[np.bool_]:
    """Terms that may be feedback terms: 2 to 20 characters, in at most ``max_df / 2**bits``
    of the documents (Anserini's 10% rule keeps collection-specific stop words out)."""
    lengths = np.fromiter((len(t) for t in index.vocabulary), dtype=np.int64,
                          count=len(index.vocabulary))
    df = np.diff(index.offsets)
    rare = (df << bits) <= index.n_docs * max_df
    return rare & (lengths >= MIN_TERM_LEN) & (lengths <= MAX_TERM_LEN)


def collection_frequencies(index: InvertedIndex) -> npt.NDArray[np.int64]:
    """Each term's field-weighted count over the corpus, in 1/16 units."""
    cf = np.zeros(len(index.vocabulary), dtype=np.int64)
    offsets = index.offsets
    # Blocks of postings, as impacts.fixed_point: an int64 copy of every count at once was
    # 600 MB at 1M documents. Sums of blocks are exact in a double (below 2**53).
    for lo in range(0, len(index.tfs), BLOCK):
        hi = min(lo + BLOCK, len(index.tfs))
        first = int(np.searchsorted(offsets, lo, side="right")) - 1
        last = int(np.searchsorted(offsets, hi - 1, side="right")) - 1
        spans = (np.minimum(offsets[first + 1:last + 2], hi)
                 - np.maximum(offsets[first:last + 1], lo))
        term = np.repeat(np.arange(last - first + 1), spans)
        cf[first:last + 1] += np.bincount(term, weights=index.tfs[lo:hi],
                                          minlength=last - first + 1).astype(np.int64)
    return cf


def _log2(value: Decimal) -> float:
    return float(_CONTEXT.divide(_CONTEXT.ln(value), _CONTEXT.ln(Decimal(2))))


def bo1_tables(cf: npt.NDArray[np.int64],
               n_docs: int) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """log2((1 + Pn) / Pn) and log2(1 + Pn) per term, Pn = F / N with F in counts (cf / 16)."""
    values, inverse = np.unique(cf, return_inverse=True)
    slope, floor = [], []
    for raw in values.tolist():
        pn = _CONTEXT.divide(Decimal(max(raw, 1)), Decimal(WEIGHT_ONE * n_docs))
        slope.append(_log2(_CONTEXT.divide(_CONTEXT.add(Decimal(1), pn), pn)))
        floor.append(_log2(_CONTEXT.add(Decimal(1), pn)))
    return (np.asarray(slope, dtype=np.float64)[inverse],
            np.asarray(floor, dtype=np.float64)[inverse])


def _best(weights: dict[int, int], limit: int) -> dict[int, int]:
    """The ``limit`` heaviest positive entries (ties: the lower term id)."""
    ranked = sorted((t for t, w in weights.items() if w > 0), key=lambda t: (-weights[t], t))
    return {t: weights[t] for t in ranked[:limit]}


def rm3_weights(forward: ForwardIndex, eligible: npt.NDArray[np.bool_], docs: Sequence[int],
                scores: Sequence[int], fb_terms: int) -> dict[int, int]:
    """Relevance-model weight per term id (in units of 1/2**32 of a score), unnormalised."""
    raw: dict[int, int] = {}
    for ordinal, score in zip(docs, scores, strict=True):
        terms, tfs = forward.vector(ordinal)
        keep = eligible[terms]
        terms, tfs = terms[keep], tfs[keep].astype(np.int64)  # uint16 would wrap on negation
        if len(terms) > fb_terms:
            top = np.lexsort((terms, -tfs))[:fb_terms]  # most frequent, then lower id
            terms, tfs = terms[top], tfs[top]
        norm = int(tfs.sum(dtype=np.int64))
        if norm == 0:
            continue
        for t, tf in zip(terms.tolist(), tfs.tolist(), strict=True):
            raw[t] = raw.get(t, 0) + ((score * tf) << 32) // norm
    return _best(raw, fb_terms)


def bo1_weights(forward: ForwardIndex, eligible: npt.NDArray[np.bool_],
                tables: tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]],
                docs: Sequence[int], fb_terms: int) -> dict[int, int]:
    """Bo1 weight per term id of the feedback documents, floored to 1/2**BO1_BITS: the
    compiled choice if numba is here, else the numpy reference (the same integers)."""
    if _bo1_kernel is None or not live():
        return bo1_reference(forward, eligible, tables, docs, fb_terms)
    slope, floor = tables
    ids, units = _bo1_kernel(forward.offsets, forward.terms, forward.tfs, eligible, slope,
                             floor, np.asarray(docs, dtype=np.int64), fb_terms,
                             float(WEIGHT_ONE >> forward.shift))
    return dict(zip(ids.tolist(), units.tolist(), strict=True))


def bo1_reference(forward: ForwardIndex, eligible: npt.NDArray[np.bool_],
                  tables: tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]],
                  docs: Sequence[int], fb_terms: int) -> dict[int, int]:
    """Bo1's choice in numpy calls: the reference the compiled path is tested against."""
    parts_t, parts_f = [], []
    for ordinal in docs:
        terms, tfs = forward.vector(ordinal)
        keep = eligible[terms]
        parts_t.append(terms[keep])
        parts_f.append(tfs[keep])
    if not parts_t:
        return {}
    terms = np.concatenate(parts_t)
    if len(terms) == 0:
        return {}
    ids, inverse = np.unique(terms, return_inverse=True)
    tfx = np.bincount(inverse, weights=np.concatenate(parts_f)) / WEIGHT_ONE  # exact sums
    slope, floor = tables
    weight = tfx * slope[ids] + floor[ids]
    units = np.floor(weight * (1 << BO1_BITS)).astype(np.int64)
    keep = units > 0
    ids, units = ids[keep], units[keep]
    top = np.lexsort((ids, -units))[:fb_terms]  # heaviest first, then the lower term id
    return dict(zip(ids[top].tolist(), units[top].tolist(), strict=True))


def _bo1_choose(offsets: Any, terms: Any, tfs: Any, eligible: Any, slope: Any, floor: Any,
                docs: Any, fb_terms: int, one: float) -> tuple[Any, Any]:
    """``bo1_reference`` as loops for numba: the feedback documents' eligible counts summed
    per term (int64, then one exact conversion and a division by 16, as numpy's float sum
    of small integers), weighed with one multiply and one add (numba does not contract
    them), and the best ``fb_terms`` kept by insertion, heaviest first, ties to the lower id.

    The sums are gathered in an open-addressing table of twice the postings' size (a power
    of two), so no sort: sorting the documents' terms, even as a merge of their ascending
    runs, was 7 of Bo1's 12 us (ADR 0019). Terms come out of the table in no useful order;
    the insertion compares (weight, id), so the choice does not depend on it.

    ``one`` is a count of 1.0 in stored units (16 >> the forward index's shift): the sum in
    stored units over it is the sum in 1/16 units over 16, exactly, both being a power-of-two
    scaling of an integer below 2**53."""
    n = 0
    for d in docs:
        n += offsets[d + 1] - offsets[d]
    size = 16
    while size < 2 * n:
        size <<= 1
    mask = size - 1
    keys = np.full(size, -1, dtype=np.int64)
    sums = np.zeros(size, dtype=np.int64)
    for d in docs:
        for p in range(offsets[d], offsets[d + 1]):
            t = np.int64(terms[p])
            if eligible[t]:
                h = (t * np.int64(0x9E3779B1)) & mask
                while keys[h] != -1 and keys[h] != t:
                    h = (h + 1) & mask
                keys[h] = t
                sums[h] += tfs[p]
    best_t = np.empty(fb_terms, dtype=np.int64)
    best_u = np.empty(fb_terms, dtype=np.int64)
    kept = 0
    scale = float(1 << BO1_BITS)
    for slot in range(size):
        t = keys[slot]
        if t < 0:
            continue
        weight = (float(sums[slot]) / one) * slope[t] + floor[t]
        u = np.int64(np.floor(weight * scale))
        if u <= 0:
            continue
        if kept == fb_terms and (u < best_u[kept - 1] or (u == best_u[kept - 1]
                                                         and t > best_t[kept - 1])):
            continue
        j = kept if kept < fb_terms else fb_terms - 1
        while j > 0 and (best_u[j - 1] < u or (best_u[j - 1] == u and best_t[j - 1] > t)):
            best_t[j], best_u[j] = best_t[j - 1], best_u[j - 1]
            j -= 1
        best_t[j], best_u[j] = t, u
        if kept < fb_terms:
            kept += 1
    return best_t[:kept], best_u[:kept]


_bo1_kernel = njit(cache=True, nogil=True)(_bo1_choose) if njit is not None else None


def interpolate(qtf: dict[int, int], feedback: dict[int, int], original: int) -> dict[int, int]:
    """Weights (1/2**WEIGHT_BITS) of query keys and feedback terms, mixed with ``original``
    (also in 1/2**WEIGHT_BITS) for the query; zero weights are dropped.

    ``qtf`` maps a key (a query term's own id, or a negative key for a term not indexed) to
    its count. With no feedback the query keeps its normalised counts alone.
    """
    one = 1 << WEIGHT_BITS
    q = sum(qtf.values())
    total = sum(feedback.values())
    if q == 0:
        return {}
    if total == 0:
        return {k: w for k, c in qtf.items() if (w := (c << WEIGHT_BITS) // q)}
    out: dict[int, int] = {}
    for key in sorted({*qtf, *feedback}):
        mixed = original * qtf.get(key, 0) * total + (one - original) * feedback.get(key, 0) * q
        weight = mixed // (q * total)
        if weight:
            out[key] = weight
    return out
