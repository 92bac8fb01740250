"""Pick the top k of a score vector with a total order: score desc, seeded tie key, id.

Scores are integers, so comparing them is exact. Tie keys cost a hash each, so they are
computed only for documents whose score is shared with another candidate.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from .streams import tie_key

IntArray = npt.NDArray[np.int64]


def top_k(
    ords: IntArray, units: IntArray, k: int, ids: Sequence[str], ranking_seed: int,
    exclude: frozenset[int] = frozenset(),
) -> list[tuple[int, int]]:
    """The best ``k`` (ordinal, score) pairs among positive scores, skipping ``exclude``.

    ``ids[ordinal]`` is the document id; ordinals follow id order, so the last key (the
    ordinal) is the id itself.
    """
    if k <= 0 or len(ords) == 0:
        return []
    if exclude:
        keep = ~np.isin(ords, np.fromiter(exclude, dtype=np.int64, count=len(exclude)))
        ords, units = ords[keep], units[keep]
    positive = units > 0
    ords, units = ords[positive], units[positive]
    if len(ords) > k:
        # The k-th largest score; every document scoring at least that is a candidate,
        # so ties at the cut are resolved below by the seeded key, never by partition order.
        threshold = np.partition(units, len(units) - k)[len(units) - k]
        chosen = units >= threshold
        ords, units = ords[chosen], units[chosen]
    pairs = list(zip(ords.tolist(), units.tolist(), strict=True))
    shared = Counter(u for _, u in pairs)
    pairs.sort(key=lambda p: (-p[1], tie_key(ranking_seed, ids[p[0]]) if shared[p[1]] > 1 else 0,
                              p[0]))
    return pairs[:k]
