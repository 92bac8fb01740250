"""One request's semantic list and its fusion, each in one compiled call where numba is.

Constants reach the kernels as arguments, never as another module's globals: numba's
on-disk cache freezes a global's value and notices only its own file changing. The same
integers as the numpy reference (``vectors.candidates``, ``vectors.keys_of``,
``fusion.competition_top``, ``fusion.fuse``), which the tests compare; compiled, a request
pays one call instead of some twenty small numpy ones.
"""

from __future__ import annotations

from typing import Any, cast

import numpy as np
import numpy.typing as npt

from ..compiled import live, njit
from ..providers import lookup as postings
from . import fusion
from . import vectors as vec
from .vectors import KEY_SHIFT, QUERY_MAX, IntArray, candidates, keys_of

# No documents and no ranks: a list not made (zero-length, so never written to).
EMPTY = (np.zeros(0, np.int64), np.zeros(0, np.int64))


def semantic_list(vectors: npt.NDArray[np.int8], radii: IntArray,
                  planes: npt.NDArray[np.uint64], query: npt.NDArray[np.int32],
                  limit: int, depth: int) -> tuple[IntArray, IntArray]:
    """The documents of semantic rank ``<= depth`` (by (rank, ordinal)) and their ranks;
    ``planes``: the documents' sign codes as ``vectors.code_planes`` lays them out."""
    if live() and _SEMANTIC is not None:
        return _SEMANTIC(vectors, radii, planes, query, limit, depth,  # type: ignore[no-any-return]
                         KEY_SHIFT)
    near = candidates(np.ascontiguousarray(planes.T), radii, query, limit)
    return fusion.competition_top(near, keys_of(vectors, radii, query, near), depth)


def ranked(ords: IntArray, keys: IntArray, depth: int) -> tuple[IntArray, IntArray]:
    """``fusion.competition_top``, compiled where numba is."""
    if live() and _RANKED is not None:
        return _RANKED(np.asarray(ords, np.int64),  # type: ignore[no-any-return]
                       np.asarray(keys, np.int64), depth)
    return fusion.competition_top(ords, keys, depth)


def fused(lexical: tuple[IntArray, IntArray], semantic: tuple[IntArray, IntArray],
          lexical_weight: int, semantic_weight: int, k: int) -> tuple[IntArray, ...]:
    """``fusion.fuse``, compiled where numba is."""
    if live() and _FUSE is not None:
        return _FUSE(lexical[0], lexical[1], semantic[0], semantic[1],  # type: ignore[no-any-return]
                     lexical_weight, semantic_weight, k, fusion.UNIT_BITS)
    return fusion.fuse(lexical, semantic, lexical_weight, semantic_weight, k)


def one_call(lexical: tuple[IntArray, IntArray], lexical_depth: int,
             sure: tuple[Any, ...] | None, query: tuple[Any, ...],
             semantic: tuple[Any, ...], weights: tuple[int, int, int, int]
             ) -> tuple[IntArray, IntArray, IntArray, IntArray, int] | None:
    """A hybrid (sub)query's fused list in one compiled call (None where numba is not live):
    the lexical candidates' competition ranks to ``lexical_depth``, the confidence rule,
    the query's vector, the semantic list and the fusion, the steps the reference path
    takes one by one (``providers.hybrid.HybridView``), with the same integers.

    ``lexical``: the lexical candidates and their scores; ``sure``: the lookup's docs,
    impacts, table (``lookup_table``), weight bits, confident coverage and its bits, or
    None when the rule is off; ``query``: the model's table, the query's token ids (none:
    no semantic list) and their weights; ``semantic``: vectors, radii, planes, prefilter,
    depth; ``weights``: lexical, semantic and confident semantic weight, k. Returns the
    fused documents, their scores, lexical and semantic ranks, and the semantic weight
    used."""
    if not live() or _ONE is None:
        return None
    docs, impacts, (rows, groups, qtfs), wbits, coverage, bits = sure or _NO_SURE
    table, ids, token_weights = query
    vectors, radii, planes, prefilter, depth = semantic
    ords, units, lex, sem, used = _ONE(
        lexical[0], lexical[1], lexical_depth, docs, impacts, rows, groups, qtfs, wbits,
        coverage, bits, table, ids, token_weights, QUERY_MAX, vectors, radii, planes,
        prefilter, depth, KEY_SHIFT, *weights, fusion.UNIT_BITS)
    return ords, units, lex, sem, int(used)


_NO_SURE = (np.zeros(0, np.int32), np.zeros(0, np.int32),
            (np.zeros((0, 3), np.int64), np.zeros(1, np.int64), np.zeros(0, np.int64)), 0, 0, 0)


def _one_loop(lex_ords: Any, lex_units: Any, lexical_depth: int, docs: Any, impacts: Any,
              rows: Any, groups: Any, qtfs: Any, wbits: int, coverage: int, bits: int,
              table: Any, ids: Any, token_weights: Any, query_max: int, vectors: Any,
              radii: Any, planes: Any, prefilter: int, depth: int, key_shift: int,
              lexical_weight: int, semantic_weight: int, confident_weight: int, k: int,
              unit_bits: int) -> Any:
    lex_o, lex_r = _ranked(lex_ords, lex_units, lexical_depth)
    weight = semantic_weight
    if coverage > 0 and len(lex_o) > 0:
        firsts = lex_o[lex_r == 1].copy()
        firsts.sort()
        acc = np.zeros(len(firsts), dtype=np.int64)
        matched = np.zeros(len(firsts), dtype=np.int64)
        _lookup(docs, impacts, rows, groups, qtfs, firsts, wbits, acc, matched)
        if (matched.max() << bits) >= len(qtfs) * coverage:
            weight = confident_weight
    sem_o = np.zeros(0, dtype=np.int64)
    sem_r = np.zeros(0, dtype=np.int64)
    if weight != 0 and depth > 0 and len(ids) > 0 and vectors.shape[0] > 0:
        query = _query(table, ids, token_weights, query_max)
        if np.any(query != 0):
            sem_o, sem_r = _semantic(vectors, radii, planes, query, prefilter, depth, key_shift)
    ords, units, lex, sem = _fuse(lex_o, lex_r, sem_o, sem_r, lexical_weight, weight, k,
                                  unit_bits)
    return ords, units, lex, sem, weight


def popcount(x: Any) -> Any:
    """The set bits of a uint64 by shifts and adds: what ``core.popcount``'s intrinsic (one
    instruction, vectorized) replaces where numba has it."""
    x = x - ((x >> np.uint64(1)) & np.uint64(0x5555555555555555))
    x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return (x * np.uint64(0x0101010101010101)) >> np.uint64(56)


def _semantic_loop(vectors: npt.NDArray[np.int8], radii: IntArray,
                   planes: npt.NDArray[np.uint64], query: npt.NDArray[np.int32],
                   limit: int, depth: int, key_shift: int) -> tuple[IntArray, IntArray]:
    n, dim = vectors.shape
    words = planes.shape[0]
    query_code = np.zeros(words, dtype=np.uint64)
    for j in range(min(dim, words * 64)):
        if query[j] > 0:
            query_code[j // 64] |= np.uint64(1) << np.uint64(j % 64)
    live_count = 0
    for i in range(n):
        if radii[i] > 0:
            live_count += 1
    near = np.empty(min(n, live_count), dtype=np.int64)
    if live_count <= limit:
        c = 0
        for i in range(n):
            if radii[i] > 0:
                near[c] = i
                c += 1
    else:
        # A plane of code words at a time: one contiguous pass each, which LLVM vectorizes.
        distance = np.zeros(n, dtype=np.int32)
        for w in range(words):
            code, plane = query_code[w], planes[w]
            for i in range(n):
                distance[i] += np.int32(_popcount(plane[i] ^ code))
        counts = np.zeros(words * 64 + 1, dtype=np.int64)
        for i in range(n):
            if radii[i] > 0:
                counts[distance[i]] += 1
        cut, reached = 0, counts[0]
        while reached < limit:
            cut += 1
            reached += counts[cut]
        c = 0
        for i in range(n):
            if radii[i] > 0 and distance[i] <= cut:
                near[c] = i
                c += 1
        near = near[:c]
    keys = np.empty(len(near), dtype=np.int64)
    for c in range(len(near)):
        i = near[c]
        acc = np.int32(0)
        for j in range(dim):
            acc += np.int32(vectors[i, j]) * query[j]
        keys[c] = (np.int64(acc) << key_shift) // radii[i]
    # Only keys at or above the depth-th largest can rank within ``depth`` (a key tied with
    # it ranks within it too): sort those alone, as the full sort would have ordered them.
    if depth < len(keys):
        floor = np.partition(keys, len(keys) - depth)[len(keys) - depth]
        chosen = np.flatnonzero(keys >= floor)
        near, keys = near[chosen], keys[chosen]
    # Descending key, ascending ordinal among equal keys (``near`` ascends: a stable sort).
    order = np.argsort(-keys, kind="mergesort")
    out_ords = np.empty(len(order), dtype=np.int64)
    out_ranks = np.empty(len(order), dtype=np.int64)
    count = 0
    for p in range(len(order)):
        rank = p + 1 if p == 0 or keys[order[p]] != keys[order[p - 1]] else out_ranks[p - 1]
        if rank > depth:
            break
        out_ords[p] = near[order[p]]
        out_ranks[p] = rank
        count += 1
    return out_ords[:count], out_ranks[:count]


def _ranked_loop(ords: IntArray, keys: IntArray, depth: int) -> tuple[IntArray, IntArray]:
    if len(ords) == 0 or depth <= 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    # Descending key, ascending ordinal among equal keys: ordinals sorted first, then a
    # stable sort by key.
    by_ord = np.argsort(ords, kind="mergesort")
    order = by_ord[np.argsort(-keys[by_ord], kind="mergesort")]
    out_ords = np.empty(len(order), dtype=np.int64)
    out_ranks = np.empty(len(order), dtype=np.int64)
    count = 0
    for p in range(len(order)):
        at = order[p]
        rank = p + 1 if p == 0 or keys[at] != keys[order[p - 1]] else out_ranks[p - 1]
        if rank > depth:
            break
        out_ords[p] = ords[at]
        out_ranks[p] = rank
        count += 1
    return out_ords[:count], out_ranks[:count]


def _fuse_loop(lex_ords: IntArray, lex_ranks: IntArray, sem_ords: IntArray,
               sem_ranks: IntArray, lexical_weight: int, semantic_weight: int, k: int,
               unit_bits: int) -> tuple[IntArray, IntArray, IntArray, IntArray]:
    both = np.concatenate((lex_ords, sem_ords))
    order = np.argsort(both, kind="mergesort")
    n = len(both)
    ords = np.empty(n, dtype=np.int64)
    units = np.zeros(n, dtype=np.int64)
    lex = np.zeros(n, dtype=np.int64)
    sem = np.zeros(n, dtype=np.int64)
    count = -1
    previous = -1
    for p in range(n):
        at = order[p]
        doc = both[at]
        if doc != previous:
            count += 1
            ords[count] = doc
            previous = doc
        if at < len(lex_ords):
            lex[count] = lex_ranks[at]
        else:
            sem[count] = sem_ranks[at - len(lex_ords)]
    count += 1
    keep = 0
    for c in range(count):
        total = 0
        if lexical_weight and lex[c] > 0:
            total += (lexical_weight << unit_bits) // (k + lex[c])
        if semantic_weight and sem[c] > 0:
            total += (semantic_weight << unit_bits) // (k + sem[c])
        if total > 0:
            ords[keep], units[keep], lex[keep], sem[keep] = ords[c], total, lex[c], sem[c]
            keep += 1
    return ords[:keep], units[:keep], lex[:keep], sem[:keep]


_popcount = popcount
if njit is not None:
    _popcount = njit(cache=True, nogil=True, inline="always",
                     intrinsic=("rookhaven.core.popcount", "popcount"))(popcount)
_SEMANTIC: Any = njit(cache=True, nogil=True)(_semantic_loop) if njit is not None else None
_RANKED: Any = njit(cache=True, nogil=True)(_ranked_loop) if njit is not None else None
_FUSE: Any = njit(cache=True, nogil=True)(_fuse_loop) if njit is not None else None
# The kernels ``_one_loop`` calls: their Python functions to the type checker, and where numba
# is, the Kernels the wrappers above call (one compilation each), made numba's dispatchers
# with ``_ONE``'s.
_ranked, _fuse, _semantic, _query, _lookup = (_ranked_loop, _fuse_loop, _semantic_loop,
                                              vec._query_loop, postings._lookup)
if njit is not None:
    _ranked, _fuse, _semantic = _RANKED, _FUSE, _SEMANTIC
    _query, _lookup = cast(Any, vec._QUERY), cast(Any, postings._compiled)
_ONE = njit(cache=True, nogil=True)(_one_loop) if njit is not None else None
