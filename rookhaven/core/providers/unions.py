"""A scorer's pool of merged query terms: each term of several lists, merged once, reused.

A query term with prefix extensions or synonyms is a group of postings lists whose value for
a document is the best of them. Taking that best per window in every request costs the
kernel a quarter of its time or more (a gather per list, ADR 0019), so it is done once per
expansion and kept: the expansion depends only on the index, fixed once built.

What is kept is the term as a sum (ADR 0047): its longest list stays where it is in the
index, and the pool holds two lists merged from the others, the documents the longest list
lacks at their best value, and those it holds at less than the others' best at the
difference. A document's sum over the three is its best over the term's lists, and the
kernel adds them as it adds any list, with no best to take. Only the extensions' postings
are copied: at 1M documents the bench queries' terms need 3.6M postings here where whole
merged lists needed 31M (249 MB). A small index keeps its small terms whole (one list:
``WHOLE_INDEX``). Scores are the same integers any way (ADR 0019).

The pool is append-only and bounded: a term that no longer fits is not kept (the kernel
folds it per request), so memory never grows past ``capacity`` postings (and
``REFUSED_MEMO`` refusals) and a range, once handed out, is never rewritten. The two arrays
are allocated at full capacity with the first merge and never move: pages never written are
never resident, and growing by copies held old and new arrays at once. Threads need no lock
to read, only to add.
"""

from __future__ import annotations

import threading
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from . import kernel

Expansion = tuple[tuple[int, int], ...]

# Postings (8 bytes each) a scorer's pool may hold: 32 MB. The 751 bench queries' terms
# need 0.4M at 100k synthetic documents and 3.6M at 1M.
CAPACITY = 1 << 22
# Where the index holds at most WHOLE_INDEX times the pool's postings, a term whose lists
# hold at most 1/WHOLE_SHARE of the pool is kept whole: one list streams a little
# faster than a sum of three (2-4% of the kernel at syn100k, 1-3 us a query on the test
# collections), and such an index's terms fit whole (syn100k's bench terms: 3.1M). A larger
# index keeps every term in parts: whole copies of its smaller terms filled the pool at
# syn1m and the kernel lost 10% to the terms refused.
WHOLE_INDEX, WHOLE_SHARE = 2, 64
REFUSED_MEMO = 4096  # expansions refused (too big for what is left) before forgetting them


class Parts(NamedTuple):
    """A query term of several lists as a sum: ``expansion[base]``, a list of the index (its
    longest), plus the pool's ``rows`` (start, end, count): the other lists' documents the
    base lacks, at their best value (count 1), and the documents the base holds at less than
    the others' best, at the difference (count 0: the base counted them). ``best``: the
    other lists' best value, weights applied. A term kept whole has no base (-1) and one
    row, its merged list, ``best`` its best value."""

    base: int
    rows: tuple[tuple[int, int, int], ...]
    best: int


class UnionPool:
    """The pool's parts of multi-list query terms, by expansion; ranges in two arrays."""

    def __init__(self, docs: npt.NDArray[np.int32], impacts: npt.NDArray[np.int32],
                 weight_bits: int, capacity: int = CAPACITY,
                 whole_upto: int | None = None) -> None:
        self._docs, self._impacts, self._bits = docs, impacts, weight_bits
        self.capacity = capacity
        if whole_upto is None:
            small = len(docs) <= WHOLE_INDEX * capacity
            whole_upto = capacity // WHOLE_SHARE if small else 0
        self.whole_upto = whole_upto
        empty = np.zeros(0, dtype=np.int32)
        self._arrays: tuple[npt.NDArray[np.int32], npt.NDArray[np.int32]] = (empty, empty)
        self._used = 0
        self._known: dict[Expansion, Parts] = {}
        # Terms that did not fit, not tried again; forgotten in a batch when there are
        # REFUSED_MEMO of them, so a full pool's server does not grow with its queries.
        self._refused: set[Expansion] = set()
        self._lock = threading.Lock()

    @property
    def arrays(self) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.int32]]:
        """The pool's documents and values: every range handed out so far lies in them."""
        return self._arrays

    @property
    def used(self) -> int:
        """Postings held."""
        return self._used

    def parts_of(self, expansion: Expansion, offsets: list[int]) -> Parts | None:
        """The expansion (two lists or more) as its longest list plus the pool's parts of the
        others, or whole if its lists hold at most ``whole_upto`` postings (``Parts``),
        merged now if new; None if it does not fit (the caller scores the lists as they
        are)."""
        found = self._known.get(expansion)
        if found is not None or expansion in self._refused:
            return found
        if self._used >= self.capacity:  # full: nothing merged only to be thrown away
            return None
        rows = [(offsets[t], offsets[t + 1], w) for t, w in expansion]
        sizes = [end - start for start, end, _ in rows]
        parts: tuple[tuple[Any, Any, int], ...]
        if sum(sizes) <= self.whole_upto:  # small: kept whole, one list at each one's best
            docs, values = kernel.union(self._docs, self._impacts,
                                        np.array(rows, dtype=np.int64), self._bits)
            base, best, parts = -1, int(values.max()), ((docs, values, 1),)
        else:
            base = sizes.index(max(sizes))
            best, parts = self._split(rows, base)
        with self._lock:
            found = self._known.get(expansion)
            if found is None:
                found = self._add(expansion, base, best, parts)
        return found

    def _split(self, rows: list[tuple[int, int, int]], base: int
               ) -> tuple[int, tuple[tuple[Any, Any, int], ...]]:
        """The others' best value and the two parts of ``rows`` (start, end, weight) beside
        row ``base``: the documents it lacks (count 1), and those it holds at less than the
        others' best, at the difference (count 0)."""
        others = np.array([row for i, row in enumerate(rows) if i != base], dtype=np.int64)
        rest_d, rest_v = kernel.union(self._docs, self._impacts, others, self._bits)
        start, end, w = rows[base]
        base_d = self._docs[start:end]
        base_v = self._impacts[start:end].astype(np.int64)
        if w != 1 << self._bits:
            base_v = np.maximum((base_v * w) >> self._bits, 1)
        # Where each of the others' documents would sit in the base (the base is not empty:
        # it is the longest list of an expansion of indexed terms).
        at = np.minimum(np.searchsorted(base_d, rest_d), len(base_d) - 1)
        shared = base_d[at] == rest_d
        excess = rest_v - np.where(shared, base_v[at], 0)
        above, lacked = shared & (excess > 0), ~shared
        return int(rest_v.max(initial=0)), ((rest_d[lacked], rest_v[lacked], 1),
                                             (rest_d[above], excess[above], 0))

    def _add(self, expansion: Expansion, base: int, best: int,
             parts: tuple[tuple[Any, Any, int], ...]) -> Parts | None:
        """Keep ``parts`` (documents, values, count), if they fit. The caller holds the lock."""
        if self._used + sum(len(docs) for docs, _, _ in parts) > self.capacity:
            if len(self._refused) >= REFUSED_MEMO:
                self._refused.clear()
            self._refused.add(expansion)
            return None
        if not len(self._arrays[0]):
            self._arrays = (np.empty(self.capacity, dtype=np.int32),
                            np.empty(self.capacity, dtype=np.int32))
        pool_d, pool_v = self._arrays
        rows = []
        for docs, values, count in parts:
            if len(docs):
                start, n = self._used, len(docs)
                pool_d[start:start + n] = docs
                pool_v[start:start + n] = values
                self._used += n  # only after the copy: a range is handed out once it is whole
                rows.append((start, start + n, count))
        found = self._known[expansion] = Parts(base, tuple(rows), best)
        return found
