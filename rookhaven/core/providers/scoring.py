"""Query-time BM25 arithmetic over integer impacts: all documents, the top k, or chosen ones.

Every path computes the same integers (sums and maxima of int64 do not depend on order),
so the engine may ask for the top k only and get exactly what a full scoring would give.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
import numpy.typing as npt

from .. import compiled
from . import kernel
from .lookup import lookup, lookup_table
from .unions import UnionPool

IntArray = npt.NDArray[np.int64]
Expansion = tuple[tuple[int, int], ...]
Plan = list[tuple[int, Expansion]]
ROWS_MEMO = 4096


@dataclass(frozen=True)
class Bm25Scorer:
    """Postings (CSR) with impacts, and the coverage factor in ``1 / 2**coverage_bits``."""

    offsets: npt.NDArray[np.int64]
    docs: npt.NDArray[np.int32]
    impacts: npt.NDArray[np.int32]
    n_docs: int
    coverage: int
    coverage_bits: int
    weight_bits: int
    # The kernel's arrays of all documents' sums not in use now (``kernel.whole_sums``): one
    # per concurrent call at most, each lent to one call at a time (``list.pop`` and
    # ``append`` are atomic). A field, made with the scorer: created on first use, two
    # threads could each make one and one list would be lost with what it held.
    _lendable: list[IntArray] = field(default_factory=list, init=False, repr=False,
                                      compare=False)
    # The list table's rows of multi-list query terms (counted once), by expansion: a term's
    # rows depend only on the index and on the pool, which never changes what it handed out
    # and never takes a term it refused (it only fills). Cleared when ROWS_MEMO are held.
    _rows: dict[Expansion, tuple[tuple[int, ...], int]] = field(
        default_factory=dict, init=False, repr=False, compare=False)

    def group(self, expansion: Expansion) -> tuple[IntArray, IntArray]:
        """Documents matching any term of one query term's expansion, each with its best value."""
        one = 1 << self.weight_bits
        parts_d, parts_v = [], []
        for term_id, weight in expansion:
            lo, hi = int(self.offsets[term_id]), int(self.offsets[term_id + 1])
            values = self.impacts[lo:hi].astype(np.int64)
            if weight != one:
                values = np.maximum((values * weight) >> self.weight_bits, 1)
            parts_d.append(self.docs[lo:hi])
            parts_v.append(values)
        if not parts_d:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        if len(parts_d) == 1:
            return parts_d[0].astype(np.int64), parts_v[0]
        docs, values = np.concatenate(parts_d).astype(np.int64), np.concatenate(parts_v)
        order = np.lexsort((values, docs))
        docs, values = docs[order], values[order]
        last = np.ones(len(docs), dtype=bool)
        last[:-1] = docs[1:] != docs[:-1]
        return docs[last], values[last]

    def covered(self, units: IntArray, matched: IntArray, distinct: int) -> IntArray:
        """Scale sums by (1 - c) + c * matched / distinct, rounding down."""
        if not self.coverage or distinct == 0:
            return units
        one = 1 << self.coverage_bits
        return (units * ((one - self.coverage) * distinct + self.coverage * matched)
                ) // (one * distinct)

    def score_all(self, plan: Plan) -> tuple[IntArray, IntArray]:
        """Every matching document (ascending ordinal) and its score."""
        acc = np.zeros(self.n_docs, dtype=np.int64)
        matched = np.zeros(self.n_docs, dtype=np.int64)
        for qtf, expansion in plan:
            docs, values = self.group(expansion)
            acc[docs] += qtf * values
            matched[docs] += 1
        ords = np.flatnonzero(matched)
        return ords, self.covered(acc[ords], matched[ords], len(plan))

    def score_top(self, plan: Plan, k: int) -> tuple[IntArray, IntArray]:
        """The documents scoring at least the k-th best score, ties at the cut included."""
        if compiled.live():
            found = self._kernel_top(plan, k)
            if found is not None:
                return found
        ords, units = self.score_all(plan)
        if k <= 0:
            return ords[:0], units[:0]
        if len(units) > k:
            threshold = np.partition(units, len(units) - k)[len(units) - k]
            keep = units >= threshold
            ords, units = ords[keep], units[keep]
        return ords, units

    @cached_property
    def term_max(self) -> list[int]:
        """Each term's largest impact: its upper bound for pruning."""
        starts = self.offsets[:-1]
        filled = np.diff(self.offsets) > 0
        top = np.zeros(len(starts), dtype=np.int64)
        if filled.any():
            # reduceat gives an empty list the next one's first value: empty lists are
            # left out (the filled ones' segments then end where each list ends).
            top[filled] = np.maximum.reduceat(self.impacts, starts[filled])
        return top.tolist()

    @cached_property
    def _starts(self) -> list[int]:
        """``offsets`` as Python ints: the list table is built in Python per request, and
        reading a numpy scalar per row cost half of that (5-7 us a request)."""
        return self.offsets.tolist()  # type: ignore[no-any-return]

    @cached_property
    def unions(self) -> UnionPool:
        """Query terms of several lists, each merged once (``unions.py``)."""
        return UnionPool(self.docs, self.impacts, self.weight_bits)

    def list_table(self, plan: Plan) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64],
                                              npt.NDArray[np.int64]]:
        """The kernel's list table: rows (start, end, weight, bound, qtf, count) per list, the
        bound being the most its query term (weight and qtf applied) adds to a document, each
        query term's first row (``groups``) and whether its rows add up (``additive``). A term
        of several lists is the union pool's where it fits there (``unions.py``: rows offset
        by the index's postings, ``kernel.top_candidates``)."""
        starts, top, bits = self._starts, self.term_max, self.weight_bits
        one = 1 << bits
        live = compiled.live()
        memo = self._rows
        # One flat list, read by fromiter: 2.5x faster than row tuples, and 1.5x than np.array.
        flat: list[int] = []
        groups = [0]
        additive: list[int] = []
        for qtf, expansion in plan:
            if len(expansion) == 1:
                t, w = expansion[0]
                bound = top[t] if w == one else max((top[t] * w) >> bits, 1)
                flat += (starts[t], starts[t + 1], w, qtf * bound, qtf, 1)
                additive.append(0)
            elif expansion:  # several lists (none: a term the index lacks)
                rows = memo.get(expansion) if live else None
                if rows is None:
                    rows = self._term_rows(expansion, live)
                    if live:
                        if len(memo) >= ROWS_MEMO:
                            memo.clear()
                        memo[expansion] = rows
                if qtf == 1:
                    flat += rows[0]
                else:  # the rows of a term counted once, its count and bound scaled
                    scaled = list(rows[0])
                    scaled[3::6] = [qtf * bound for bound in scaled[3::6]]
                    scaled[4::6] = [qtf] * (len(scaled) // 6)
                    flat += scaled
                additive.append(rows[1])
            else:
                additive.append(0)
            groups.append(len(flat) // 6)
        return (np.fromiter(flat, np.int64, len(flat)).reshape(len(flat) // 6, 6),
                np.array(groups, dtype=np.int64), np.array(additive, dtype=np.int64))

    def _term_rows(self, expansion: Expansion, live: bool) -> tuple[tuple[int, ...], int]:
        """The list table's rows of a query term counted once, flat, and whether they add up:
        the pool's where it holds the term (``live``: the kernel reads the pool), else its
        lists."""
        starts, top, bits = self._starts, self.term_max, self.weight_bits
        one = 1 << bits

        def bound_of(t: int, w: int) -> int:  # list_table inlines it: its hot path
            return top[t] if w == one else max((top[t] * w) >> bits, 1)

        parts = self.unions.parts_of(expansion, starts) if live else None
        flat: list[int] = []
        if parts is None:
            for t, w in expansion:
                flat += (starts[t], starts[t + 1], w, bound_of(t, w), 1, 1)
            return tuple(flat), 0
        # Every row of an additive term carries the term's bound: the most its sum adds is
        # the best of its lists, the base's or the others'.
        bound = parts.best
        if parts.base >= 0:
            t, w = expansion[parts.base]
            bound = max(bound, bound_of(t, w))
            flat += (starts[t], starts[t + 1], w, bound, 1, 1)
        n_index = len(self.docs)
        for start, end, count in parts.rows:
            flat += (n_index + start, n_index + end, one, bound, 1, count)
        return tuple(flat), 1

    def _borrow(self) -> IntArray | None:
        """An array for the kernel's sums of all documents, where it takes one."""
        if self.n_docs > kernel.WHOLE_DOCS:
            return None
        try:
            return self._lendable.pop()
        except IndexError:
            return kernel.whole_sums(self.n_docs)

    def _kernel_top(self, plan: Plan, k: int) -> tuple[IntArray, IntArray] | None:
        lists, groups, additive = self.list_table(plan)
        sums = self._borrow()
        found = kernel.top_candidates(
            self.docs, self.impacts, lists, groups, additive, self.n_docs, self.weight_bits, k,
            1 << self.coverage_bits, self.coverage, len(plan), pool=self.unions.arrays,
            sums=sums)
        # Not in a ``finally``: an array a failed call left half written is dropped.
        if sums is not None:
            self._lendable.append(sums)
        return found

    def score_docs(self, plan: Plan, ords: IntArray) -> IntArray:
        """Scores of the given documents (0 where one matches nothing): compiled if numba
        is here (``lookup.py``), else ``score_docs_numpy``."""
        ords = np.asarray(ords, dtype=np.int64)
        found = lookup(self.docs, self.impacts, self._starts, plan, ords, self.weight_bits)
        if found is None:
            return self.score_docs_numpy(plan, ords)
        return self.covered(*found, len(plan))

    def matched_of(self, plan: Plan, ords: IntArray) -> IntArray:
        """How many of ``plan``'s query terms each document of ``ords`` matches (through
        any of a term's expansions): compiled if numba is here, else in numpy."""
        ords = np.asarray(ords, dtype=np.int64)
        found = lookup(self.docs, self.impacts, self._starts, plan, ords, self.weight_bits)
        return (found if found is not None else self._sums_numpy(plan, ords))[1]

    def lookup_args(self, plan: Plan) -> tuple[Any, ...]:
        """What the compiled lookup reads for ``plan``: postings, impacts, its table
        (``lookup.lookup_table``) and the weight bits, for a kernel calling it."""
        return self.docs, self.impacts, lookup_table(self._starts, plan), self.weight_bits

    def score_docs_numpy(self, plan: Plan, ords: IntArray) -> IntArray:
        """``score_docs`` in numpy calls: the reference the compiled lookup is tested against."""
        return self.covered(*self._sums_numpy(plan, np.asarray(ords, dtype=np.int64)),
                            len(plan))

    def _sums_numpy(self, plan: Plan, ords: IntArray) -> tuple[IntArray, IntArray]:
        """Each document's uncovered sum and matched terms under ``plan``, in numpy."""
        one = 1 << self.weight_bits
        acc = np.zeros(len(ords), dtype=np.int64)
        matched = np.zeros(len(ords), dtype=np.int64)
        for qtf, expansion in plan:
            best = np.zeros(len(ords), dtype=np.int64)
            for term_id, weight in expansion:
                # Binary search in the term's postings: no copy of a long list.
                lo, hi = int(self.offsets[term_id]), int(self.offsets[term_id + 1])
                at = lo + np.searchsorted(self.docs[lo:hi], ords)
                hit = at < hi
                hit[hit] = self.docs[at[hit]] == ords[hit]
                values = self.impacts[at[hit]].astype(np.int64)
                if weight != one:
                    values = np.maximum((values * weight) >> self.weight_bits, 1)
                best[hit] = np.maximum(best[hit], values)
            acc += qtf * best
            matched += best > 0
        return acc, matched
