"""The compiled top-k path of bm25 scoring: numba term-at-a-time accumulation, if numba is here.

Optional and speed only: it computes the same integer sums, maxima and coverage products
as ``scoring.Bm25Scorer.score_all`` (integer arithmetic does not depend on order), so the
bytes of a result never depend on whether numba is installed; tests compare both paths.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

njit: Any
try:
    from numba import njit
except ImportError:  # pragma: no cover - exercised where numba is absent
    njit = None

AVAILABLE = njit is not None


def _kth_largest(values: Any, n: int, k: int) -> Any:
    """The k-th largest of ``values[:n]`` (1 <= k <= n), by a min-heap of the k largest."""
    heap = np.empty(k, dtype=np.int64)
    for i in range(k):
        heap[i] = values[i]
    heap.sort()
    for i in range(k, n):
        u = values[i]
        if u > heap[0]:
            heap[0] = u
            j = 0
            while True:  # sift down
                c = 2 * j + 1
                if c >= k:
                    break
                if c + 1 < k and heap[c + 1] < heap[c]:
                    c += 1
                if heap[c] < heap[j]:
                    heap[c], heap[j] = heap[j], heap[c]
                    j = c
                else:
                    break
    return heap[0]


def _covered(u: Any, m: Any, cov_one: int, cov_c: int, distinct: int) -> Any:
    if cov_c == 0 or distinct == 0:
        return u
    return (u * ((cov_one - cov_c) * distinct + cov_c * np.int64(m))) // (cov_one * distinct)


def _weighted(v: Any, w: Any, wbits: int) -> Any:
    if w == (1 << wbits):
        return v
    return max((v * w) >> wbits, np.int64(1))


def _accumulate(docs: Any, impacts: Any, lists: Any, lo: int, hi: int, q: Any, wbits: int,
                acc: Any, hits: Any, best: Any, touched: Any, nt: int, gtouched: Any) -> Any:
    """Add one query term's postings (best of its expansion lists) to every document."""
    if hi - lo == 1:
        s, e, w = lists[lo, 0], lists[lo, 1], lists[lo, 2]
        for p in range(s, e):
            d = docs[p]
            if hits[d] == 0:
                touched[nt] = d
                nt += 1
            acc[d] += q * _weighted(np.int64(impacts[p]), w, wbits)
            hits[d] += 1
        return nt
    ng = 0
    for li in range(lo, hi):
        s, e, w = lists[li, 0], lists[li, 1], lists[li, 2]
        for p in range(s, e):
            d = docs[p]
            v = _weighted(np.int64(impacts[p]), w, wbits)
            if best[d] == 0:
                gtouched[ng] = d
                ng += 1
            if v > best[d]:
                best[d] = v
    for i in range(ng):
        d = gtouched[i]
        if hits[d] == 0:
            touched[nt] = d
            nt += 1
        acc[d] += q * best[d]
        hits[d] += 1
        best[d] = 0
    return nt


def _probe(docs: Any, impacts: Any, lists: Any, lo: int, hi: int, q: Any, wbits: int,
           cand: Any, nc: int, mark: Any, acc: Any, hits: Any, best: Any) -> None:
    """Add one query term to the candidates only (ascending, marked): each list is either
    binary-searched per candidate or scanned, whichever touches fewer postings."""
    for li in range(lo, hi):
        s, e, w = lists[li, 0], lists[li, 1], lists[li, 2]
        if nc * 24 < e - s:
            a = s
            for i in range(nc):
                d = cand[i]
                b = e
                while a < b:  # first posting >= d, searching forward from the last one
                    mid = (a + b) >> 1
                    if docs[mid] < d:
                        a = mid + 1
                    else:
                        b = mid
                if a < e and docs[a] == d:
                    v = _weighted(np.int64(impacts[a]), w, wbits)
                    if v > best[d]:
                        best[d] = v
        else:
            for p in range(s, e):
                d = docs[p]
                if mark[d]:
                    v = _weighted(np.int64(impacts[p]), w, wbits)
                    if v > best[d]:
                        best[d] = v
    for i in range(nc):
        d = cand[i]
        if best[d] > 0:
            acc[d] += q * best[d]
            hits[d] += 1
            best[d] = 0


def _lower_cut(acc: Any, hits: Any, touched: Any, nt: int, k: int, cov_one: int, cov_c: int,
               distinct: int, rest: Any) -> Any:
    """The k-th best covered partial score (a lower bound of the final k-th best), or -1
    when it cannot beat ``rest``. Division is costly, so it is done only for documents
    whose raw sum can reach the cut: covered(s) <= s, and covered is monotone in s."""
    raw = np.empty(nt, dtype=np.int64)
    for i in range(nt):
        raw[i] = acc[touched[i]]
    kth_raw = _kth_largest(raw, nt, k)
    if kth_raw <= rest:
        return np.int64(-1)
    floor = _covered(kth_raw, 1, cov_one, cov_c, distinct)
    scores = np.empty(nt, dtype=np.int64)
    n = 0
    for i in range(nt):
        d = touched[i]
        if acc[d] >= floor:
            scores[n] = _covered(acc[d], hits[d], cov_one, cov_c, distinct)
            n += 1
    return _kth_largest(scores, n, k)


def _keep_reachable(cand: Any, nc: int, acc: Any, hits: Any, mark: Any, unseen: int,
                    rest: Any, theta: Any, cov_one: int, cov_c: int, distinct: int) -> int:
    """Keep (in place, in order) the candidates whose upper bound still reaches ``theta``:
    their sum plus every unseen term's bound, covered as if they matched them all."""
    kept = 0
    for i in range(nc):
        d = cand[i]
        m = min(np.int64(hits[d]) + unseen, np.int64(distinct))
        if _covered(acc[d] + rest, m, cov_one, cov_c, distinct) >= theta:
            cand[kept] = d
            kept += 1
        else:
            mark[d] = 0
    return kept


def _top_candidates(docs: Any, impacts: Any, lists: Any, groups: Any, qtf: Any, bounds: Any,
                    wbits: int, k: int, cov_one: int, cov_c: int, distinct: int,
                    acc: Any, hits: Any, best: Any, touched: Any, gtouched: Any,
                    mark: Any) -> Any:
    """MaxScore, term at a time: query terms arrive in descending upper-bound order. Once
    the remaining terms' bounds sum below the k-th best lower bound, no unseen document
    can reach the cut, so the rest only update candidates whose upper bound still can."""
    n_groups = len(groups) - 1
    rest = np.zeros(n_groups + 1, dtype=np.int64)
    for g in range(n_groups - 1, -1, -1):
        rest[g] = rest[g + 1] + bounds[g]
    nt = 0
    g = 0
    theta = np.int64(-1)
    while g < n_groups:
        nt = _accumulate(docs, impacts, lists, groups[g], groups[g + 1], qtf[g], wbits,
                         acc, hits, best, touched, nt, gtouched)
        g += 1
        if g < n_groups and 0 < k <= nt:
            theta = _lower_cut(acc, hits, touched, nt, k, cov_one, cov_c, distinct, rest[g])
            if rest[g] < theta:
                break
    if g < n_groups:
        # Candidates: touched documents whose upper bound can still reach theta.
        cand = touched[:nt].astype(np.int64)
        nc = _keep_reachable(cand, nt, acc, hits, mark, n_groups - g, rest[g], theta,
                             cov_one, cov_c, distinct)
        cand = np.sort(cand[:nc])
        for i in range(nc):
            mark[cand[i]] = 1
        while g < n_groups:
            _probe(docs, impacts, lists, groups[g], groups[g + 1], qtf[g], wbits, cand, nc,
                   mark, acc, hits, best)
            g += 1
            if g < n_groups:
                # The cut only rises: drop candidates whose bound fell below it.
                lbs = np.empty(nc, dtype=np.int64)
                for i in range(nc):
                    d = cand[i]
                    lbs[i] = _covered(acc[d], hits[d], cov_one, cov_c, distinct)
                theta = max(theta, _kth_largest(lbs, nc, k))
                nc = _keep_reachable(cand, nc, acc, hits, mark, n_groups - g, rest[g], theta,
                                     cov_one, cov_c, distinct)
        for i in range(nc):
            mark[cand[i]] = 0
    else:
        cand = np.empty(nt, dtype=np.int64)
        for i in range(nt):
            cand[i] = touched[i]
        nc = nt
    scores = np.empty(nc, dtype=np.int64)
    for i in range(nc):
        d = cand[i]
        scores[i] = _covered(acc[d], hits[d], cov_one, cov_c, distinct)
    threshold = _kth_largest(scores, nc, k) if 0 < k < nc else np.int64(-1)
    n_out = 0
    for i in range(nc):
        if k > 0 and scores[i] >= threshold:
            n_out += 1
    ords = np.empty(n_out, dtype=np.int64)
    units = np.empty(n_out, dtype=np.int64)
    j = 0
    for i in range(nc):
        if k > 0 and scores[i] >= threshold:
            ords[j] = cand[i]
            units[j] = scores[i]
            j += 1
    for i in range(nt):
        d = touched[i]
        acc[d] = 0
        hits[d] = 0
    return ords, units


if njit is not None:
    _kth_largest = njit(cache=True, nogil=True)(_kth_largest)
    _covered = njit(cache=True, nogil=True)(_covered)
    _weighted = njit(cache=True, nogil=True)(_weighted)
    _accumulate = njit(cache=True, nogil=True)(_accumulate)
    _probe = njit(cache=True, nogil=True)(_probe)
    _lower_cut = njit(cache=True, nogil=True)(_lower_cut)
    _keep_reachable = njit(cache=True, nogil=True)(_keep_reachable)


_kernel = njit(cache=True, nogil=True)(_top_candidates) if njit is not None else None


class Scratch:
    """Zeroed work arrays sized for one corpus; the kernel leaves them zeroed again."""

    def __init__(self, n_docs: int) -> None:
        self.acc = np.zeros(n_docs, dtype=np.int64)
        self.best = np.zeros(n_docs, dtype=np.int64)
        self.hits = np.zeros(n_docs, dtype=np.int32)
        self.touched = np.empty(n_docs, dtype=np.int32)
        self.gtouched = np.empty(n_docs, dtype=np.int32)
        self.mark = np.zeros(n_docs, dtype=np.uint8)


def top_candidates(docs: npt.NDArray[np.int32], impacts: npt.NDArray[np.int32],
                   lists: npt.NDArray[np.int64], groups: npt.NDArray[np.int64],
                   qtf: npt.NDArray[np.int64], bounds: npt.NDArray[np.int64], wbits: int,
                   k: int, cov_one: int, cov_c: int, distinct: int,
                   scratch: Scratch) -> tuple[Any, Any]:
    """Documents scoring at least the k-th best score (ties included) and their scores.

    ``lists`` rows are (start, end, weight) postings ranges; query term ``g`` owns rows
    ``groups[g]:groups[g+1]``, counts ``qtf[g]`` times and contributes at most ``bounds[g]``;
    terms should come in descending ``bounds`` order for the pruning to bite.
    """
    assert _kernel is not None
    return _kernel(docs, impacts, lists, groups, qtf, bounds, wbits, k, cov_one, cov_c, distinct,  # type: ignore[no-any-return]
                   scratch.acc, scratch.hits, scratch.best, scratch.touched, scratch.gtouched,
                   scratch.mark)
