"""The compiled top-k path of bm25 scoring: numba term-at-a-time accumulation, if numba is here.

Optional and speed only: it computes the same integer sums, maxima and coverage products
as ``scoring.Bm25Scorer.score_all`` (integer arithmetic does not depend on order), so the
bytes of a result never depend on whether numba is installed; tests compare both paths.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from ..compiled import AVAILABLE, njit

__all__ = ["AVAILABLE", "top_candidates"]


def _sift_min(heap: Any, k: int) -> None:
    """Restore a min-heap of size k after its root was replaced."""
    j = 0
    while True:
        c = 2 * j + 1
        if c >= k:
            return
        if c + 1 < k and heap[c + 1] < heap[c]:
            c += 1
        if heap[c] < heap[j]:
            heap[c], heap[j] = heap[j], heap[c]
            j = c
        else:
            return


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
            _sift_min(heap, k)
    return heap[0]


def _covered(u: Any, m: Any, cov_one: int, cov_c: int, distinct: int) -> Any:
    if cov_c == 0 or distinct == 0:
        return u
    return (u * ((cov_one - cov_c) * distinct + cov_c * np.int64(m))) // (cov_one * distinct)


def _weighted(v: Any, w: Any, wbits: int) -> Any:
    if w == (1 << wbits):
        return v
    return max((v * w) >> wbits, np.int64(1))


def _group_lists(docs: Any, impacts: Any, lists: Any, lo: int, hi: int, wbits: int) -> Any:
    """One query term's postings: the union of its lists, each document at its best value."""
    if hi == lo:  # a query term that matches no indexed term
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
    s, e, w = lists[lo, 0], lists[lo, 1], lists[lo, 2]
    gd = np.empty(e - s, dtype=np.int64)
    gv = np.empty(e - s, dtype=np.int64)
    for p in range(s, e):
        gd[p - s] = docs[p]
        gv[p - s] = _weighted(np.int64(impacts[p]), w, wbits)
    n = e - s
    for li in range(lo + 1, hi):
        s, e, w = lists[li, 0], lists[li, 1], lists[li, 2]
        md = np.empty(n + e - s, dtype=np.int64)
        mv = np.empty(n + e - s, dtype=np.int64)
        i, p, m = 0, s, 0
        while i < n or p < e:
            if p >= e or (i < n and gd[i] < docs[p]):
                md[m], mv[m] = gd[i], gv[i]
                i += 1
            else:
                v = _weighted(np.int64(impacts[p]), w, wbits)
                if i < n and gd[i] == docs[p]:
                    v = max(v, gv[i])
                    i += 1
                md[m], mv[m] = docs[p], v
                p += 1
            m += 1
        gd, gv, n = md, mv, m
    return gd[:n], gv[:n]


def _merge_add(ad: Any, asum: Any, am: Any, gd: Any, gv: Any, q: Any, theta: Any,
               rest: Any, admit: bool = True) -> Any:
    """The accumulator (docs ascending, sums, matched counts) plus q times one term,
    keeping only documents whose sum plus ``rest`` (the bounds of the terms still to
    come) can reach ``theta``: the rest cannot lift them to the cut. With ``admit``
    false, documents not already accumulated are not added (they cannot qualify)."""
    na, nb = len(ad), len(gd)
    od = np.empty(na + nb, dtype=np.int64)
    osum = np.empty(na + nb, dtype=np.int64)
    om = np.empty(na + nb, dtype=np.int64)
    i, j, m = 0, 0, 0
    while i < na or j < nb:
        if j >= nb or (i < na and ad[i] < gd[j]):
            d, total, hits = ad[i], asum[i], am[i]
            i += 1
        elif i >= na or gd[j] < ad[i]:
            d, total, hits = np.int64(gd[j]), q * np.int64(gv[j]), np.int64(1)
            j += 1
            if not admit:
                continue
        else:
            d, total, hits = ad[i], asum[i] + q * np.int64(gv[j]), am[i] + 1
            i += 1
            j += 1
        if total + rest >= theta:
            od[m], osum[m], om[m] = d, total, hits
            m += 1
    return od[:m], osum[:m], om[:m]


def _group_value(docs: Any, impacts: Any, lists: Any, lo: int, hi: int, d: Any,
                 wbits: int) -> Any:
    """One query term's value for document ``d`` (0 if absent), by binary search per list."""
    top = np.int64(0)
    for li in range(lo, hi):
        a, b = lists[li, 0], lists[li, 1]
        end = b
        while a < b:  # first posting >= d
            mid = (a + b) >> 1
            if docs[mid] < d:
                a = mid + 1
            else:
                b = mid
        if a < end and docs[a] == d:
            v = _weighted(np.int64(impacts[a]), lists[li, 2], wbits)
            if v > top:
                top = v
    return top


def _sift_max(hb: Any, hd: Any, n: int, j: int) -> None:
    while True:
        c = 2 * j + 1
        if c >= n:
            return
        if c + 1 < n and hb[c + 1] > hb[c]:
            c += 1
        if hb[c] > hb[j]:
            hb[c], hb[j] = hb[j], hb[c]
            hd[c], hd[j] = hd[j], hd[c]
            j = c
        else:
            return


def _best_first(docs: Any, impacts: Any, lists: Any, groups: Any, qtf: Any, g: int,
                rest: Any, theta: Any, k: int, wbits: int, cov_one: int, cov_c: int,
                distinct: int, ad: Any, asum: Any, am: Any, budget: Any) -> Any:
    """Finish scoring the touched documents in descending upper-bound order, looking the
    remaining terms up by binary search; stop once no bound can reach the cut, which rises
    with every exact score. Returns the documents scored at or above the cut at the time,
    the cut, and whether it finished within ``budget`` lookups (if not, the documents are
    dropped and only the raised cut is worth keeping)."""
    n_groups = len(groups) - 1
    # A max-heap of (bound, document) over the documents whose bound reaches the cut:
    # heapify is linear, and only the few documents popped before the stop are scored.
    nt = len(ad)
    hb = np.empty(nt, dtype=np.int64)
    hd = np.empty(nt, dtype=np.int64)  # positions in the accumulator
    n = 0
    for i in range(nt):
        m = min(am[i] + n_groups - g, np.int64(distinct))
        b = _covered(asum[i] + rest, m, cov_one, cov_c, distinct)
        if b >= theta:
            hb[n] = b
            hd[n] = i
            n += 1
    for j in range(n // 2 - 1, -1, -1):
        _sift_max(hb, hd, n, j)
    heap = np.empty(k, dtype=np.int64)  # min-heap of the k best exact scores
    size = 0
    out_d = np.empty(n, dtype=np.int64)
    out_s = np.empty(n, dtype=np.int64)
    n_out = 0
    pops = 0
    while n > 0:
        if hb[0] < theta:
            break  # every other bound is lower still
        pops += 1
        if pops > budget:
            return out_d[:0], out_s[:0], theta, False
        at = hd[0]
        d = ad[at]
        n -= 1
        hb[0], hd[0] = hb[n], hd[n]
        _sift_max(hb, hd, n, 0)
        total, m = asum[at], am[at]
        for gg in range(g, n_groups):
            v = _group_value(docs, impacts, lists, groups[gg], groups[gg + 1], d, wbits)
            if v > 0:
                total += qtf[gg] * v
                m += 1
        score = _covered(total, m, cov_one, cov_c, distinct)
        if score < theta:
            continue
        out_d[n_out] = d
        out_s[n_out] = score
        n_out += 1
        if size < k:
            heap[size] = score
            size += 1
            j = size - 1
            while j > 0 and heap[(j - 1) >> 1] > heap[j]:  # sift up
                heap[(j - 1) >> 1], heap[j] = heap[j], heap[(j - 1) >> 1]
                j = (j - 1) >> 1
        elif score > heap[0]:
            heap[0] = score
            _sift_min(heap, k)
        if size == k and heap[0] > theta:
            theta = heap[0]
    return out_d[:n_out], out_s[:n_out], theta, True


def _lower_cut(asum: Any, am: Any, k: int, cov_one: int, cov_c: int, distinct: int,
               rest: Any) -> Any:
    """A lower bound of the final k-th best score: the k-th best covered partial score, or
    a cheaper bound when even that could not beat ``rest``. Division is costly, so it is
    done only for documents whose raw sum can reach the cut (covered(s) <= s, monotone)."""
    n = len(asum)
    kth_raw = _kth_largest(asum, n, k)
    floor = _covered(kth_raw, 1, cov_one, cov_c, distinct)
    if kth_raw <= rest:
        return floor  # cannot beat rest anyway: the cheap bound is enough
    scores = np.empty(n, dtype=np.int64)
    c = 0
    for i in range(n):
        if asum[i] >= floor:
            scores[c] = _covered(asum[i], am[i], cov_one, cov_c, distinct)
            c += 1
    return _kth_largest(scores, c, k)


def _top_candidates(docs: Any, impacts: Any, lists: Any, groups: Any, qtf: Any, bounds: Any,
                    wbits: int, k: int, cov_one: int, cov_c: int, distinct: int) -> Any:
    """MaxScore, term at a time: query terms arrive in descending upper-bound order and are
    merged into a sorted accumulator (sequential memory, no corpus-sized arrays). Once the
    remaining terms' bounds sum below the k-th best lower bound, no unseen document can
    reach the cut, and the accumulated ones are finished best bound first."""
    n_groups = len(groups) - 1
    rest = np.zeros(n_groups + 1, dtype=np.int64)
    for g in range(n_groups - 1, -1, -1):
        rest[g] = rest[g + 1] + bounds[g]
    ad = np.empty(0, dtype=np.int64)
    asum = np.empty(0, dtype=np.int64)
    am = np.empty(0, dtype=np.int64)
    g = 0
    theta = np.int64(-1)
    while g < n_groups:
        lo, hi = groups[g], groups[g + 1]
        if hi - lo == 1 and lists[lo, 2] == (1 << wbits):
            # One list at full weight: merge straight from the postings, no copy.
            s, e = lists[lo, 0], lists[lo, 1]
            ad, asum, am = _merge_add(ad, asum, am, docs[s:e], impacts[s:e], qtf[g], theta,
                                      rest[g + 1])
        else:
            gd, gv = _group_lists(docs, impacts, lists, lo, hi, wbits)
            ad, asum, am = _merge_add(ad, asum, am, gd, gv, qtf[g], theta, rest[g + 1])
        g += 1
        if g < n_groups and 0 < k <= len(ad):
            theta = max(theta, _lower_cut(asum, am, k, cov_one, cov_c, distinct, rest[g]))
            if rest[g] < theta:
                break
    finished = False  # whether best-first produced the candidates
    while g < n_groups:
        # Best first is cheap while the bounds are tight (few documents to look up); past a
        # budget of lookups, merging the next term sequentially is cheaper, and it lowers
        # the bounds. A cut reached in an abandoned attempt stays valid.
        span = np.int64(0)
        for li in range(groups[g], groups[n_groups]):
            span += lists[li, 1] - lists[li, 0]
        cand, scores, theta, finished = _best_first(
            docs, impacts, lists, groups, qtf, g, rest[g], theta, k, wbits, cov_one, cov_c,
            distinct, ad, asum, am, span // 256 + 256)
        if finished:
            break
        gd, gv = _group_lists(docs, impacts, lists, groups[g], groups[g + 1], wbits)
        ad, asum, am = _merge_add(ad, asum, am, gd, gv, qtf[g], theta, rest[g + 1], False)
        g += 1
        if g < n_groups and 0 < k <= len(ad):
            theta = max(theta, _lower_cut(asum, am, k, cov_one, cov_c, distinct, rest[g]))
    if not finished:  # every term is merged: the accumulator holds exact sums
        cand = ad
        scores = np.empty(len(ad), dtype=np.int64)
        for i in range(len(ad)):
            scores[i] = _covered(asum[i], am[i], cov_one, cov_c, distinct)
    nc = len(cand)
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
    return ords, units


if njit is not None:
    _sift_min = njit(cache=True, nogil=True)(_sift_min)
    _kth_largest = njit(cache=True, nogil=True)(_kth_largest)
    _covered = njit(cache=True, nogil=True)(_covered)
    _weighted = njit(cache=True, nogil=True)(_weighted)
    _group_lists = njit(cache=True, nogil=True)(_group_lists)
    _merge_add = njit(cache=True, nogil=True)(_merge_add)
    _group_value = njit(cache=True, nogil=True)(_group_value)
    _sift_max = njit(cache=True, nogil=True)(_sift_max)
    _best_first = njit(cache=True, nogil=True)(_best_first)
    _lower_cut = njit(cache=True, nogil=True)(_lower_cut)


_kernel = njit(cache=True, nogil=True)(_top_candidates) if njit is not None else None


def top_candidates(docs: npt.NDArray[np.int32], impacts: npt.NDArray[np.int32],
                   lists: npt.NDArray[np.int64], groups: npt.NDArray[np.int64],
                   qtf: npt.NDArray[np.int64], bounds: npt.NDArray[np.int64], wbits: int,
                   k: int, cov_one: int, cov_c: int, distinct: int) -> tuple[Any, Any]:
    """Documents scoring at least the k-th best score (ties included) and their scores.

    ``lists`` rows are (start, end, weight) postings ranges; query term ``g`` owns rows
    ``groups[g]:groups[g+1]``, counts ``qtf[g]`` times and contributes at most ``bounds[g]``;
    terms should come in descending ``bounds`` order for the pruning to bite.
    """
    assert _kernel is not None
    return _kernel(docs, impacts, lists, groups, qtf, bounds, wbits,  # type: ignore[no-any-return]
                   k, cov_one, cov_c, distinct)
