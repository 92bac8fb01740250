"""Pick the top k of a score vector with a total order: score desc, seeded tie key, id.

Scores are integers, so comparing them is exact. Tie keys cost a hash each, so they are
computed only for documents whose score is shared with another candidate, once per
request, in one batch.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from itertools import compress
from typing import Any

import numpy as np
import numpy.typing as npt

from .compiled import live, njit
from .rng import CodeUnits, prefix_units, segments
from .streams import tie_keys

IntArray = npt.NDArray[np.int64]
Picks = tuple[list[int], list[int]]  # ordinals and their scores, in rank order

NUMPY_FROM = 512  # candidates from which numpy filters and cuts faster than a list does
# Candidates from which numpy ranks them faster than lists do: at ~100 (a top-100 cut,
# a quarter of them tied) 31 us against 48; at ten, list calls are cheaper than numpy's.
RANK_NUMPY_FROM = 64
# Runs of equal scores up to this long are ordered in place by insertion (no arrays made:
# four a run cost ~4 us of a top-100 cut); longer ones by two stable sorts.
SHORT_RUN = 16
# Candidates up to this many are put in score order in place by insertion: numpy's sort of
# ten cost more than the rest of their ranking.
SHORT_SORT = 128


class TieKeys:
    """The tie keys of one ranking stream, each document's hashed at most once.

    With ``units`` (the ids' code units, in ordinal order) a compiled ranking hashes the
    ids it needs itself (``top_k``); what it hashed is remembered here all the same."""

    __slots__ = ("_ids", "_known", "_learned", "_prefix", "seed", "units")

    def __init__(self, ranking_seed: int, ids: Sequence[str],
                 units: CodeUnits | None = None) -> None:
        self.seed = ranking_seed
        self._ids = ids
        self._known: dict[int, int] = {}
        # Keys the compiled ranking hashed, as it returned them: most requests never ask
        # for them again (a one-part query's picks are its order), so they become a
        # mapping only when ``of`` is called (2 us of a top-100 request).
        self._learned: list[npt.NDArray[np.uint64]] = []
        self.units = units
        self._prefix: npt.NDArray[np.uint16] | None = None

    @property
    def prefix(self) -> npt.NDArray[np.uint16]:
        """``streams.tie_key``'s prefix as code units, for the compiled ranking; made on first
        use (most top-10 cuts rank in Python and never need it)."""
        if self._prefix is None:
            self._prefix = prefix_units(f"{self.seed:08x}\x00")
        return self._prefix

    def of(self, ords: list[int]) -> dict[int, int]:
        """A mapping holding (at least) the tie key of every ordinal in ``ords``."""
        known = self._known
        while self._learned:
            learned = self._learned.pop().tolist()
            half = len(learned) // 2
            known.update(zip(learned[:half], learned[half:], strict=True))
        new = [o for o in ords if o not in known]
        if new:
            ids = self._ids
            known.update(zip(new, tie_keys(self.seed, [ids[o] for o in new]), strict=True))
        return known

    def learn(self, learned: npt.NDArray[np.uint64]) -> None:
        """Remember tie keys hashed elsewhere (the compiled ranking): their ordinals, then
        their keys, in one array."""
        self._learned.append(learned)


def ranked(ords: list[int], units: list[int], keys: TieKeys) -> Picks:
    """``ords`` and their scores in the total order: score descending, seeded tie key,
    ordinal. Plain lists of ints in and out, so ranking allocates no tuple per document."""
    n = len(units)
    if len(set(units)) == n:  # no two scores equal: the score alone orders them
        order = sorted(range(n), key=units.__getitem__, reverse=True)
    else:
        shared = Counter(units)
        tie = keys.of([o for o, u in zip(ords, units, strict=True) if shared[u] > 1])
        # Stable sorts, least significant key first: ordinal, tie key, then score
        # descending (a reverse sort keeps equal items in order). A tie key is only
        # compared between equal scores, so that of an unshared score (0, or known from an
        # earlier call) changes nothing.
        order = sorted(range(n), key=ords.__getitem__)
        order.sort(key=[tie.get(o, 0) for o in ords].__getitem__)
        order.sort(key=units.__getitem__, reverse=True)
    return [ords[i] for i in order], [units[i] for i in order]


def top_k(
    ords: IntArray, units: IntArray, k: int, keys: TieKeys,
    exclude: frozenset[int] = frozenset(),
) -> Picks:
    """The best ``k`` positive-scoring documents not in ``exclude``, ranked: their ordinals
    and their scores.

    Ordinals follow document id order, so the last key (the ordinal) is the id itself.
    """
    if k <= 0 or len(ords) == 0:
        return [], []
    if (not exclude and _CUT_AND_RANK is not None and keys.units is not None and live()
            and (len(ords) >= RANK_NUMPY_FROM or _repeats(units))):
        ranked_o, ranked_u, learned = _CUT_AND_RANK(
            np.asarray(ords, dtype=np.int64), np.asarray(units, dtype=np.int64), k,
            keys.prefix, keys.units.units, keys.units.offsets)
        keys.learn(learned)
        return ranked_o[:k].tolist(), ranked_u[:k].tolist()
    if len(ords) >= NUMPY_FROM or (len(ords) >= RANK_NUMPY_FROM and not exclude):
        ords, units = _numpy_cut(ords, units, k, exclude)
        if len(ords) >= RANK_NUMPY_FROM:
            o_list, u_list = _ranked_arrays(np.asarray(ords, dtype=np.int64),
                                            np.asarray(units, dtype=np.int64), keys)
            return o_list[:k], u_list[:k]
    o_list, u_list = ords.tolist(), units.tolist()
    if exclude or (u_list and min(u_list) <= 0):
        kept = [u > 0 and o not in exclude for o, u in zip(o_list, u_list, strict=True)]
        o_list, u_list = list(compress(o_list, kept)), list(compress(u_list, kept))
    if len(u_list) > k:
        # Keep every document scoring at least the k-th best: ties at the cut are resolved
        # by the seeded key in ``ranked``, never by the order they arrived in.
        cut = sorted(u_list, reverse=True)[k - 1]
        kept = [u >= cut for u in u_list]
        o_list, u_list = list(compress(o_list, kept)), list(compress(u_list, kept))
    o_list, u_list = ranked(o_list, u_list, keys)
    return o_list[:k], u_list[:k]


def _repeats(units: IntArray) -> bool:
    """Whether two scores are equal. A few candidates without ties rank fastest as lists;
    with ties, the compiled ranking's hashing beats the lists' (ten of them, a quarter
    tied: 7 us against 13; none tied: 5.6 against 3.0)."""
    listed = units.tolist()
    return len(set(listed)) < len(listed)


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


def _ranked_arrays(ords: IntArray, units: IntArray, keys: TieKeys) -> Picks:
    """``ranked`` over arrays: one stable sort by score, and only if scores repeat a lexsort
    by (score descending, tie key, ordinal) with the tie keys of the repeated ones."""
    order = np.argsort(-units, kind="stable")
    by_score, their_ords = units[order], ords[order]
    equal = by_score[1:] == by_score[:-1]
    if not equal.any():
        return their_ords.tolist(), by_score.tolist()
    tied = np.zeros(len(order), dtype=bool)
    tied[1:] |= equal
    tied[:-1] |= equal
    tied_ords = their_ords[tied].tolist()
    known = keys.of(tied_ords)
    tie = np.zeros(len(order), dtype=np.uint64)
    tie[tied] = [known[o] for o in tied_ords]
    final = np.lexsort((their_ords, tie, -by_score))
    return their_ords[final].tolist(), by_score[final].tolist()


def _cut_and_rank(ords: Any, units: Any, k: int, prefix: Any, id_units: Any,
                  id_offsets: Any) -> Any:
    """``_numpy_cut`` (no exclusions) then ``_ranked_arrays`` in one compiled call: the
    positive candidates at or above the k-th best score, in the total order, and the tie
    keys it hashed (``_rank``)."""
    at, tied = _rank(ords, units, k, prefix, id_units, id_offsets)
    return ords[at], units[at], tied


def seed_prefix(seed: int) -> Any:
    """``TieKeys.prefix`` made in compiled code: the code units of ``f"{seed:08x}\x00"``
    for a uint32 ``seed`` (eight lower-case hex digits, then NUL)."""
    prefix = np.empty(9, dtype=np.uint16)
    for i in range(8):
        digit = (seed >> (28 - 4 * i)) & 15
        prefix[i] = 48 + digit if digit < 10 else 87 + digit  # '0'-'9', 'a'-'f'
    prefix[8] = 0
    return prefix


def _rank(ords: Any, units: Any, k: int, prefix: Any, id_units: Any, id_offsets: Any) -> Any:
    """Where, in ``ords`` and ``units``, each positive candidate at or above the k-th best
    score stands, in the total order; and the tie keys hashed, of the documents sharing a
    score: their ordinals then their keys in one array (``TieKeys.learn``).

    The order is (score descending, tie key, ordinal) for documents sharing a score and
    the score alone otherwise, as ``_ranked_arrays`` gives; ordinals are distinct, so it is
    total and no sort's stability decides anything."""
    n = 0
    for i in range(len(units)):
        n += units[i] > 0
    at = np.empty(n, dtype=np.int64)
    n = 0
    for i in range(len(units)):
        if units[i] > 0:
            at[n] = i
            n += 1
    if n > k:
        threshold = np.partition(units[at], n - k)[n - k]
        m = 0
        for i in range(n):
            if units[at[i]] >= threshold:
                at[m] = at[i]
                m += 1
        at, n = at[:m], m
    if n <= SHORT_SORT:  # by score, descending, in place: numpy's sort costs more here
        for i in range(1, n):
            ai, ui = at[i], units[at[i]]
            j = i - 1
            while j >= 0 and units[at[j]] < ui:
                at[j + 1] = at[j]
                j -= 1
            at[j + 1] = ai
    else:
        at = at[np.argsort(-units[at], kind="mergesort")]
    o, u = ords[at], units[at]
    tied = np.zeros(n, dtype=np.bool_)
    for i in range(1, n):
        if u[i] == u[i - 1]:
            tied[i] = True
            tied[i - 1] = True
    tied_o = o[tied]
    rows = segments(prefix, id_units, id_offsets[tied_o], id_offsets[tied_o + 1])
    t = len(tied_o)
    learned = np.empty(2 * t, dtype=np.uint64)
    key = np.zeros(n, dtype=np.uint64)
    j = 0
    for i in range(n):
        if tied[i]:
            key[i] = (rows[j, 0] << np.uint64(32)) | rows[j, 1]  # as streams.tie_key
            learned[j], learned[t + j] = o[i], key[i]
            j += 1
    a = 0
    while a < n:
        b = a + 1
        while b < n and u[b] == u[a]:
            b += 1
        if 1 < b - a <= SHORT_RUN:  # one score's run, sorted in place by (tie key, ordinal)
            for i in range(a + 1, b):
                ai, oi, ki = at[i], o[i], key[i]
                j = i - 1
                while j >= a and (key[j] > ki or (key[j] == ki and o[j] > oi)):
                    at[j + 1], o[j + 1], key[j + 1] = at[j], o[j], key[j]
                    j -= 1
                at[j + 1], o[j + 1], key[j + 1] = ai, oi, ki
        elif b - a > 1:  # a long run: by ordinal, then (stably) by tie key
            run = at[a:b].copy()
            run_k = key[a:b].copy()
            by_ord = np.argsort(o[a:b], kind="mergesort")
            run, run_k = run[by_ord], run_k[by_ord]
            at[a:b] = run[np.argsort(run_k, kind="mergesort")]
        a = b
    return at, learned


# Compiled only where the tie keys' hash is (numba): otherwise numpy ranks as before.
if njit is not None and segments is not None:
    seed_prefix = njit(cache=True, nogil=True)(seed_prefix)
    _rank = njit(cache=True, nogil=True)(_rank)
    _CUT_AND_RANK: Any = njit(cache=True, nogil=True)(_cut_and_rank)
else:  # pragma: no cover - exercised where numba is absent
    _CUT_AND_RANK = None
