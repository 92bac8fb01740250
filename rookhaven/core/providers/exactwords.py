"""The exact-word bonus of a lexical list (ADR 0067), in one compiled call where numba is.

For each query token with a form bit, a document whose posting of the token's stem has that
bit set earns ``weight`` (in 1/2^weight_bits) of the posting's impact. The numpy reference
and the compiled loop give the same integers; the tests compare them.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from ..compiled import live, njit

IntArray = npt.NDArray[np.int64]


def exact_bonus(offsets: IntArray, docs: npt.NDArray[np.int32], forms: npt.NDArray[np.uint8],
                impacts: npt.NDArray[np.int32], terms: IntArray, bits: IntArray,
                ords: IntArray, weight: int, weight_bits: int) -> IntArray:
    """Each of ``ords``' bonus over the query tokens given as their stems' ``terms`` and
    their forms' ``bits``."""
    if live() and _BONUS is not None:
        return _BONUS(offsets, docs, forms, impacts, terms,  # type: ignore[no-any-return]
                      bits, ords, weight, weight_bits)
    bonus = np.zeros(len(ords), np.int64)
    for term, bit in zip(terms.tolist(), bits.tolist(), strict=True):
        lo, hi = int(offsets[term]), int(offsets[term + 1])
        at = lo + np.minimum(np.searchsorted(docs[lo:hi], ords), hi - lo - 1)
        held = (docs[at] == ords) & (((forms[at] >> bit) & 1) == 1)
        bonus += np.where(held, (impacts[at].astype(np.int64) * weight) >> weight_bits, 0)
    return bonus


def _bonus_loop(offsets: Any, docs: Any, forms: Any, impacts: Any, terms: Any, bits: Any,
                ords: Any, weight: int, weight_bits: int) -> Any:
    bonus = np.zeros(len(ords), dtype=np.int64)
    for t in range(len(terms)):
        lo, hi, bit = offsets[terms[t]], offsets[terms[t] + 1], bits[t]
        for i in range(len(ords)):
            doc = ords[i]
            a, b = lo, hi
            while a < b:  # the first posting at or after the document
                middle = (a + b) // 2
                if docs[middle] < doc:
                    a = middle + 1
                else:
                    b = middle
            if a < hi and docs[a] == doc and (np.int64(forms[a]) >> bit) & 1 == 1:
                bonus[i] += (np.int64(impacts[a]) * weight) >> weight_bits
    return bonus


_BONUS: Any = njit(cache=True, nogil=True)(_bonus_loop) if njit is not None else None
