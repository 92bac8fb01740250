"""Pick the top k of a score vector with a total order: score desc, seeded tie key, id.

Scores are integers, so comparing them is exact. Tie keys cost a hash each, so they are
computed only for documents whose score is shared with another candidate, once per
request, in one batch.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from operator import itemgetter

import numpy as np
import numpy.typing as npt

from .streams import tie_keys

IntArray = npt.NDArray[np.int64]
Pair = tuple[int, int]  # (ordinal, score)

NUMPY_FROM = 512  # candidates from which numpy filters and cuts faster than a list does

_score = itemgetter(1)


class TieKeys:
    """The tie keys of one ranking stream, each document's hashed at most once."""

    __slots__ = ("_ids", "_known", "seed")

    def __init__(self, ranking_seed: int, ids: Sequence[str]) -> None:
        self.seed = ranking_seed
        self._ids = ids
        self._known: dict[int, int] = {}

    def of(self, ords: list[int]) -> dict[int, int]:
        """A mapping holding (at least) the tie key of every ordinal in ``ords``."""
        known = self._known
        new = [o for o in ords if o not in known]
        if new:
            ids = self._ids
            known.update(zip(new, tie_keys(self.seed, [ids[o] for o in new]), strict=True))
        return known


def ranked(pairs: list[Pair], keys: TieKeys) -> list[Pair]:
    """``pairs`` in the total order: score descending, then seeded tie key, then ordinal."""
    shared = Counter(map(_score, pairs))
    if len(shared) == len(pairs):  # no two scores equal: the score alone orders them
        return sorted(pairs, key=_score, reverse=True)
    known = keys.of([o for o, u in pairs if shared[u] > 1])
    # A key is only ever compared between equal scores, so any key of an unshared
    # score (known from an earlier call, or 0) orders the same.
    order = sorted([(-u, known.get(o, 0), o) for o, u in pairs])
    return [(o, -u) for u, _, o in order]


def top_k(
    ords: IntArray, units: IntArray, k: int, keys: TieKeys,
    exclude: frozenset[int] = frozenset(),
) -> list[Pair]:
    """The best ``k`` (ordinal, score) pairs among positive scores, skipping ``exclude``.

    Ordinals follow document id order, so the last key (the ordinal) is the id itself.
    """
    if k <= 0 or len(ords) == 0:
        return []
    if len(ords) >= NUMPY_FROM:
        ords, units = _numpy_cut(ords, units, k, exclude)
    listed = units.tolist()
    if exclude or (listed and min(listed) <= 0):
        pairs = [(o, u) for o, u in zip(ords.tolist(), listed, strict=True)
                 if u > 0 and o not in exclude]
    else:
        pairs = list(zip(ords.tolist(), listed, strict=True))
    if len(pairs) > k:
        # Keep every pair scoring at least the k-th best: ties at the cut are resolved by
        # the seeded key in ``ranked``, never by the order they arrived in.
        pairs.sort(key=_score, reverse=True)
        cut, end = pairs[k - 1][1], k
        while end < len(pairs) and pairs[end][1] == cut:
            end += 1
        del pairs[end:]
    return ranked(pairs, keys)[:k]


def _numpy_cut(ords: IntArray, units: IntArray, k: int,
               exclude: frozenset[int]) -> tuple[IntArray, IntArray]:
    """Positive, not excluded, and at least the k-th best score: a superset of the picks."""
    if exclude:
        keep = ~np.isin(ords, np.fromiter(exclude, dtype=np.int64, count=len(exclude)))
        ords, units = ords[keep], units[keep]
    positive = units > 0
    ords, units = ords[positive], units[positive]
    if len(ords) > k:
        threshold = np.partition(units, len(units) - k)[len(units) - k]
        chosen = units >= threshold
        ords, units = ords[chosen], units[chosen]
    return ords, units
