"""Document and query vectors of a static model, and the exact integer key that ranks them.

A document's vector is the sum of its token vectors scaled to int8 (256 bytes a document at
256 dimensions); a query's is the same sum scaled to int16. Both scalings round half away
from zero in integer arithmetic. A document's semantic key under a query is
``floor(dot(q, d) * 2^20 / radius(d))`` with ``radius(d) = isqrt(|d|^2 * 2^16)``: cosine
order up to the query's own (constant) length, every step an integer (ADR 0044). Dot
products are int32 sums of int8 x int16 products, which cannot overflow at 256 dimensions
(256 * 127 * 32767 < 2^31) and are the same in any order. The functions here are the numpy
references; a request's compiled path is ``lists.semantic_list``.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable

import numpy as np
import numpy.typing as npt

from ..compiled import live, njit
from .model import StaticModel

IntArray = npt.NDArray[np.int64]

DOC_MAX = 127
QUERY_MAX = 32767
KEY_SHIFT = 20
RADIUS_SHIFT = 16
MAX_DIM = 256  # the int32 bound above holds up to here
# Dimensions whose signs make a document's prefilter code: all of them. Measured (nDCG@10
# over npl, cacm, cisi, lisa, cranfield, prefilter 1,000): 256 signs 0.4537, the first 128
# 0.4485, the first 64 0.4513 (0.4539 at a prefilter of 2,000, twice the exact keys).
CODE_DIMS = 256
CHUNK = 4096  # documents per reference-path matrix product


def scaled(sums: npt.NDArray[np.int64], top: int) -> npt.NDArray[np.int64]:
    """Each row of ``sums`` scaled so its largest magnitude is ``top``, rounded half away
    from zero in integers; an all-zero row stays zero."""
    sums = np.atleast_2d(sums)
    peak = np.abs(sums).max(axis=1, keepdims=True)
    safe = np.maximum(peak, 1)
    magnitude = (2 * np.abs(sums) * top + safe) // (2 * safe)
    return np.where(peak == 0, 0, np.sign(sums) * magnitude)


def document_vectors(model: StaticModel, texts: Iterable[str],
                     df: IntArray | None = None
                     ) -> tuple[npt.NDArray[np.int8], npt.NDArray[np.int64]]:
    """The int8 vectors of ``texts`` and their radii (0: no token, never ranked); with
    ``df``, each token's count of documents holding it is added there."""
    tokens = [model.tokenizer.ids(text) for text in texts]
    if df is not None:
        for ids in tokens:
            if ids:
                df[np.unique(np.asarray(ids, dtype=np.int64))] += 1
    vectors = np.zeros((len(tokens), model.dim), dtype=np.int8)
    # A block at a time: the int64 sums and their scaling's temporaries stay a few MB.
    for start in range(0, len(tokens), CHUNK):
        block = tokens[start:start + CHUNK]
        if live() and _SUMS is not None:
            lengths = np.fromiter(map(len, block), dtype=np.int64, count=len(block))
            flat = np.fromiter(itertools.chain.from_iterable(block), dtype=np.int64,
                               count=int(lengths.sum()))
            sums = _SUMS(model.table, flat, lengths)
        else:
            sums = np.stack([model.row_sum(ids) for ids in block])
        vectors[start:start + len(block)] = scaled(sums, DOC_MAX)
    return vectors, radii(vectors)


def _sums_loop(table: npt.NDArray[np.int16], flat: IntArray, lengths: IntArray) -> IntArray:
    dim = table.shape[1]
    out = np.zeros((len(lengths), dim), dtype=np.int64)
    at = 0
    for d in range(len(lengths)):
        for t in range(at, at + lengths[d]):
            row = flat[t]
            for j in range(dim):
                out[d, j] += table[row, j]
        at += lengths[d]
    return out


def radii(vectors: npt.NDArray[np.int8]) -> npt.NDArray[np.int64]:
    """``isqrt(|d|^2 * 2^16)`` of each vector: exact (math.isqrt), once per document."""
    squares = np.concatenate([
        (vectors[at:at + CHUNK].astype(np.int32) ** 2).sum(axis=1, dtype=np.int64)
        for at in range(0, len(vectors), CHUNK)]) if len(vectors) else np.zeros(0, np.int64)
    return np.fromiter((math.isqrt(int(s) << RADIUS_SHIFT) for s in squares.tolist()),
                       dtype=np.int64, count=len(squares))


def rarity_weights(df: IntArray, documents: int) -> IntArray:
    """Each token's query weight by rarity: ``bit_length((N + 1) // (df + 1))``, from 1 (in
    half the documents or more) to about log2(N) + 1 (in none); integers, no logarithm."""
    ratios = (documents + 1) // (df + 1)
    return np.fromiter((int(r).bit_length() for r in ratios.tolist()), dtype=np.int64,
                       count=len(ratios))


def query_vector(model: StaticModel, text: str, weights: IntArray | None = None
                 ) -> npt.NDArray[np.int32] | None:
    """The int16-scaled vector of ``text`` (as int32; each token's row times its weight,
    if ``weights`` are given), or None when it has no token."""
    if live() and _QUERY is not None:
        ids = np.asarray(model.tokenizer.ids(text), dtype=np.int64)
        ones = np.ones(len(ids), dtype=np.int64) if weights is None else weights[ids]
        vector: npt.NDArray[np.int32] = _QUERY(model.table, ids, ones, QUERY_MAX)
        return vector if vector.any() else None
    if weights is None:
        total = model.token_sum(text)
    else:
        ids = np.asarray(model.tokenizer.ids(text), dtype=np.int64)
        total = (model.table[ids].astype(np.int64) * weights[ids][:, None]).sum(axis=0)
    if not total.any():
        return None
    scaled_vector: npt.NDArray[np.int32] = scaled(total, QUERY_MAX)[0].astype(np.int32)
    return scaled_vector


def _query_loop(table: npt.NDArray[np.int16], ids: IntArray, weights: IntArray,
                top: int) -> npt.NDArray[np.int32]:
    """``query_vector``'s sum and scaling: the same integers as ``scaled``."""
    dim = table.shape[1]
    total = np.zeros(dim, dtype=np.int64)
    for t in range(len(ids)):
        for j in range(dim):
            total[j] += np.int64(table[ids[t], j]) * weights[t]
    peak = 0
    for j in range(dim):
        peak = max(peak, abs(total[j]))
    out = np.zeros(dim, dtype=np.int32)
    if peak == 0:
        return out
    for j in range(dim):
        magnitude = (2 * abs(total[j]) * top + peak) // (2 * peak)
        out[j] = magnitude if total[j] > 0 else -magnitude
    return out


def _keys_reference(vectors: npt.NDArray[np.int8], radii_: npt.NDArray[np.int64],
                    query: npt.NDArray[np.int32]) -> npt.NDArray[np.int64]:
    out = np.empty(len(vectors), dtype=np.int64)
    for start in range(0, len(vectors), CHUNK):
        block = vectors[start:start + CHUNK].astype(np.int32)
        dots = (block @ query).astype(np.int64)
        r = radii_[start:start + CHUNK]
        out[start:start + CHUNK] = np.where(r > 0, (dots << KEY_SHIFT) // np.maximum(r, 1),
                                            np.iinfo(np.int64).min)
    return out


def sign_codes(vectors: npt.NDArray[np.int8]) -> npt.NDArray[np.uint64]:
    """The sign bits of each vector's first ``CODE_DIMS`` components (bit j set: component
    j > 0), packed little-endian into 64-bit words: the prefilter's codes, 32 bytes a
    document at 256 dimensions."""
    n, dim = vectors.shape
    used = min(dim, CODE_DIMS)
    out = np.zeros((n, -(-used // 64)), dtype=np.uint64)
    for at in range(0, n, CHUNK):  # a block at a time: the bits are a byte each
        block = vectors[at:at + CHUNK]
        bits = np.zeros((len(block), out.shape[1] * 64), dtype=bool)
        bits[:, :used] = block[:, :used] > 0
        packed = np.packbits(bits, axis=1, bitorder="little")
        out[at:at + len(block)] = np.ascontiguousarray(packed).view("<u8")
    return out


def code_planes(codes: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint64]:
    """``codes`` (a row a document) by plane: row w holds word w of every document, so the
    compiled prefilter reads each plane in one contiguous pass."""
    return np.ascontiguousarray(codes.T)


_POPCOUNT = np.array([bin(i).count("1") for i in range(256)], dtype=np.int32)


def candidates(codes: npt.NDArray[np.uint64], radii_: npt.NDArray[np.int64],
               query: npt.NDArray[np.int32], limit: int) -> IntArray:
    """The documents the exact keys are computed for: every document with a token when at
    most ``limit`` have one; else those whose sign code is nearest the query's in Hamming
    distance, every document at the cut's distance included (no tie is broken here)."""
    live_count = int(np.count_nonzero(radii_))
    if live_count <= limit:
        return np.flatnonzero(radii_ > 0).astype(np.int64)
    query_code = sign_codes(np.asarray(query > 0, dtype=np.int8)[None, :])[0]
    flipped = (codes ^ query_code).view(np.uint8)
    distances = _POPCOUNT[flipped].sum(axis=1).astype(np.int32)
    distances[radii_ == 0] = np.iinfo(np.int32).max
    counts = np.bincount(distances[radii_ > 0])
    cut = int(np.searchsorted(np.cumsum(counts), limit))  # least distance reaching limit
    return np.flatnonzero(distances <= cut).astype(np.int64)


def keys_of(vectors: npt.NDArray[np.int8], radii_: npt.NDArray[np.int64],
            query: npt.NDArray[np.int32], ords: IntArray) -> IntArray:
    """The keys of the documents ``ords`` (all with a token)."""
    return _keys_reference(vectors[ords], radii_[ords], query)


_SUMS = njit(cache=True, nogil=True)(_sums_loop) if njit is not None else None
_QUERY = njit(cache=True, nogil=True)(_query_loop) if njit is not None else None
