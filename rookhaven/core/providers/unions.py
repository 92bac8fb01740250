"""A scorer's pool of merged query terms: each term of several lists, merged once, reused.

A query term with prefix extensions or synonyms is a group of postings lists whose value for
a document is the best of them. The kernel used to take that best per window in every
request, and for bm25@3 twice (its first pass and its feedback pass score the same query
terms). The merged list (each document once, at its best weighted value) depends only on
the index and the term's expansion, both fixed once built, so it is computed once and kept:
a pooled term then streams like a term of one list. Scores are the same integers either way
(ADR 0019).

The pool is append-only and bounded: a merge that no longer fits is not kept (the kernel
folds that term per request, as before), so memory never grows past ``capacity`` postings
(and ``REFUSED_MEMO`` refusals) and a range, once handed out, is never rewritten. The two
arrays are allocated at full capacity with the first merge and never move: pages never
written are never resident, and growing by copies held old and new arrays at once (48 MB
at the cap). Threads need no lock to read, only to add.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
import numpy.typing as npt

from . import kernel

Expansion = tuple[tuple[int, int], ...]

# Postings (8 bytes each) a scorer's pool may hold: 32 MB. The 751 bench queries' terms
# need 3.1M at 100k synthetic documents; at 1M the first-seen (most frequent) terms fit.
CAPACITY = 1 << 22
REFUSED_MEMO = 4096  # expansions refused (too big for what is left) before forgetting them


class UnionPool:
    """Merged postings of multi-list query terms, by expansion; ranges in two arrays."""

    def __init__(self, docs: npt.NDArray[np.int32], impacts: npt.NDArray[np.int32],
                 weight_bits: int, capacity: int = CAPACITY) -> None:
        self._docs, self._impacts, self._bits = docs, impacts, weight_bits
        self.capacity = capacity
        empty = np.zeros(0, dtype=np.int32)
        self._arrays: tuple[npt.NDArray[np.int32], npt.NDArray[np.int32]] = (empty, empty)
        self._used = 0
        self._known: dict[Expansion, tuple[int, int, int]] = {}
        # Merges that did not fit, not tried again; forgotten in a batch when there are
        # REFUSED_MEMO of them, so a full pool's server does not grow with its queries.
        self._refused: set[Expansion] = set()
        self._lock = threading.Lock()

    @property
    def arrays(self) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.int32]]:
        """The pool's documents and values: every range handed out so far lies in them."""
        return self._arrays

    def range_of(self, expansion: Expansion, offsets: list[int]) -> tuple[int, int, int] | None:
        """(start, end, largest value) of the expansion's merged list in ``arrays``, merged
        now if new; None if it does not fit (the caller scores the lists as they are)."""
        found = self._known.get(expansion)
        if found is not None or expansion in self._refused:
            return found
        rows = np.array([(offsets[t], offsets[t + 1], w) for t, w in expansion],
                        dtype=np.int64)
        # The union holds at least its longest list: if even that cannot fit, do not merge.
        if self._used + int((rows[:, 1] - rows[:, 0]).max()) > self.capacity:
            return None
        docs, values = kernel.union(self._docs, self._impacts, rows, self._bits)
        with self._lock:
            found = self._known.get(expansion)
            if found is None:
                found = self._add(expansion, docs, values)
        return found

    def _add(self, expansion: Expansion, docs: Any, values: Any) -> tuple[int, int, int] | None:
        n = len(docs)
        if n == 0 or self._used + n > self.capacity:
            if len(self._refused) >= REFUSED_MEMO:
                self._refused.clear()
            self._refused.add(expansion)
            return None
        if not len(self._arrays[0]):
            self._arrays = (np.empty(self.capacity, dtype=np.int32),
                            np.empty(self.capacity, dtype=np.int32))
        pool_d, pool_v = self._arrays
        start = self._used
        pool_d[start:start + n] = docs
        pool_v[start:start + n] = values
        self._used += n  # only after the copy: a range is handed out once it is whole
        found = self._known[expansion] = (start, start + n, int(values.max()))
        return found
