"""Reciprocal-rank fusion in integers: two ranked lists, one score per document.

A list ranks documents by competition ranking (1 + how many score strictly higher), so equal
scores share a rank and no tie-break is needed here; the engine's seeded tie keys order
equal fused scores later. A document earns ``weight * 2^24 // (k + rank)`` from each list
it is in (weights in 1/256 units), so a fused score is an exact integer in 2^-32 units.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

WEIGHT_BITS = 8
UNIT_BITS = 24
SCALE = 1 << (WEIGHT_BITS + UNIT_BITS)

IntArray = npt.NDArray[np.int64]


def competition_top(ords: IntArray, keys: IntArray, depth: int) -> tuple[IntArray, IntArray]:
    """The documents of rank ``<= depth`` by descending key, ascending by (rank, ordinal),
    and their ranks."""
    ords, keys = np.asarray(ords, dtype=np.int64), np.asarray(keys, dtype=np.int64)
    if not len(ords) or depth <= 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    if len(keys) > depth:
        cut = np.partition(keys, len(keys) - depth)[len(keys) - depth]
        keep = keys >= cut
        ords, keys = ords[keep], keys[keep]
    order = np.lexsort((ords, -keys))
    ords, keys = ords[order], keys[order]
    # Rank = 1 + the number of strictly greater keys: the first position of its key.
    descending = -keys
    ranks = np.searchsorted(descending, descending, side="left") + 1
    return ords, ranks.astype(np.int64)


def contribution(weight: int, k: int, ranks: IntArray) -> IntArray:
    """What each rank of a list earns: ``weight * 2^24 // (k + rank)``."""
    return (np.int64(weight) << UNIT_BITS) // (k + np.asarray(ranks, dtype=np.int64))


def fuse(lexical: tuple[IntArray, IntArray], semantic: tuple[IntArray, IntArray],
         lexical_weight: int, semantic_weight: int, k: int
         ) -> tuple[IntArray, IntArray, IntArray, IntArray]:
    """The union of both lists' documents (ascending), their fused scores, and each one's
    lexical and semantic rank (0: not in that list)."""
    lex_ords, lex_ranks = lexical
    sem_ords, sem_ranks = semantic
    ords = np.union1d(lex_ords, sem_ords).astype(np.int64)
    lex_rank = np.zeros(len(ords), np.int64)
    sem_rank = np.zeros(len(ords), np.int64)
    lex_rank[np.searchsorted(ords, lex_ords)] = lex_ranks
    sem_rank[np.searchsorted(ords, sem_ords)] = sem_ranks
    units = np.zeros(len(ords), np.int64)
    if lexical_weight:
        units += np.where(lex_rank > 0, contribution(lexical_weight, k, lex_rank), 0)
    if semantic_weight:
        units += np.where(sem_rank > 0, contribution(semantic_weight, k, sem_rank), 0)
    keep = units > 0
    return ords[keep], units[keep], lex_rank[keep], sem_rank[keep]
