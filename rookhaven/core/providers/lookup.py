"""Scores of chosen documents, a binary search per postings list: compiled if numba is here.

The merge asks for the whole query's score of the few picks its cut did not hold
(``Bm25Scorer.score_docs``). In numpy that is eight array calls per list of the plan, and
bm25@3's feedback plan has dozens of lists: 11% of a worker's time on npl jobs. One compiled
call walks the same lists with the same integer arithmetic, so the scores are identical.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from ..compiled import live, njit

IntArray = npt.NDArray[np.int64]


def _lookup(docs: Any, impacts: Any, rows: Any, groups: Any, qtfs: Any, ords: Any,
            wbits: int, acc: Any, matched: Any) -> None:
    """Per document of ``ords``: per query term ``g`` (rows ``groups[g]:groups[g+1]`` of
    start, end, weight), the best weighted impact among its lists, times ``qtfs[g]``, summed
    into ``acc``; the terms matched counted into ``matched``. As ``score_docs``'s numpy
    loop: ``max((impact * weight) >> wbits, 1)`` unless the weight is one."""
    one = np.int64(1) << wbits
    for i in range(len(ords)):
        d = ords[i]
        total = np.int64(0)
        m = np.int64(0)
        for g in range(len(groups) - 1):
            best = np.int64(0)
            for r in range(groups[g], groups[g + 1]):
                lo, hi, weight = rows[r, 0], rows[r, 1], rows[r, 2]
                while lo < hi:  # the first position holding d or more
                    mid = (lo + hi) >> 1
                    if docs[mid] < d:
                        lo = mid + 1
                    else:
                        hi = mid
                if lo < rows[r, 1] and docs[lo] == d:
                    v = np.int64(impacts[lo])
                    if weight != one:
                        v = max((v * weight) >> wbits, np.int64(1))
                    best = max(best, v)
            total += qtfs[g] * best
            m += best > 0
        acc[i] = total
        matched[i] = m


_compiled = njit(cache=True, nogil=True)(_lookup) if njit is not None else None


def lookup(docs: npt.NDArray[np.int32], impacts: npt.NDArray[np.int32],
           starts: Sequence[int], plan: list[tuple[int, tuple[tuple[int, int], ...]]],
           ords: IntArray, wbits: int) -> tuple[IntArray, IntArray] | None:
    """Each document's uncovered sum and matched terms under ``plan``; None without numba
    (the caller scores in numpy). ``starts``: each term's first posting, as Python ints
    (reading a numpy scalar per row cost more than the compiled call)."""
    if _compiled is None or not live():
        return None
    rows, groups, qtfs = lookup_table(starts, plan)
    acc = np.zeros(len(ords), dtype=np.int64)
    matched = np.zeros(len(ords), dtype=np.int64)
    _compiled(docs, impacts, rows, groups, qtfs, ords, wbits, acc, matched)
    return acc, matched


def lookup_table(starts: Sequence[int], plan: list[tuple[int, tuple[tuple[int, int], ...]]]
                 ) -> tuple[IntArray, IntArray, IntArray]:
    """The lookup's arguments for ``plan``: rows of (start, end, weight), each query term's
    first row, each query term's count."""
    flat: list[int] = []
    groups = [0]
    for _, expansion in plan:
        for t, w in expansion:
            flat += (starts[t], starts[t + 1], w)
        groups.append(len(flat) // 3)
    return (np.fromiter(flat, np.int64, len(flat)).reshape(len(flat) // 3, 3),
            np.array(groups, dtype=np.int64),
            np.fromiter([qtf for qtf, _ in plan], np.int64, len(plan)))
