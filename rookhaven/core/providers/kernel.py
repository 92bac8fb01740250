"""The compiled top-k path of bm25 scoring: windowed MaxScore in numba, if numba is here.

Optional and speed only: it computes the same integer sums, maxima and coverage products
as ``scoring.Bm25Scorer.score_all`` (integer arithmetic does not depend on order), so the
bytes of a result never depend on whether numba is installed; tests compare both paths.

MaxScore (Turtle and Flood, 1995) over windows of documents, as Lucene's
MaxScoreBulkScorer does it: query terms sorted by their upper bound; the cheapest terms
whose bounds sum below the current k-th best score cannot lift a document on their own
("non-essential"). Per window of ``WINDOW`` documents, the other terms' postings are added
into a window-sized accumulator (small enough to stay in cache), the candidates that the
non-essential terms could still lift to the cut are kept, and those terms are then looked
up per candidate, or scanned over the window when the candidates are many. A query term
is a group of postings lists (itself, its prefix extensions, its synonyms) whose value
for a document is the best of them; a term's short lists are merged first. A term the
scorer holds in its pool (``unions.py``) is additive instead: its longest list plus the
pool's parts of the others, whose sum is that best (ADR 0047); list rows that start past
the index's postings are ranges of that pool.

A plan with more than ``MAX_PRUNED`` query terms (bm25@3's feedback query: the query's terms
and ten light expansion terms) skips the pruning: every posting is added and each window's
documents that reach the cut are scored. Those bounds sum above the cut for long, so MaxScore
kept most candidates and its bookkeeping cost more than the postings it skipped (ADR 0018).
So does a plan whose postings are spread evenly over its terms, or few for its k
(``PRUNE_SHARE``, ADR 0033): MaxScore saves what it skips of one long list. Given an array
of all documents (``whole_sums``; the scorer lends one up to ``WHOLE_DOCS``), that path adds
each query term of one list in one run, not a window at a time (ADR 0041).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from ..compiled import AVAILABLE, njit

__all__ = ["AVAILABLE", "top_candidates", "union", "whole_sums"]

# Lists shorter than this within one query term are merged before scoring: cheap to merge,
# and one seek in their union replaces a seek in each (a prefix can have dozens).
SMALL_LIST = 2048
# Documents per window: 4096 measured best of 2048-16384 on the 100k synthetic corpus; from
# LARGE documents, four times that (the fixed cost per window and essential term weighs
# more where most windows hold no candidate). At 1M, with pooled terms additive (ADR 0047),
# 16384 took 3-6% off every column against 8192 (32768 the same, 65536 and 4096 slower).
WINDOW = 4096
LARGE, LARGE_WINDOW = 500_000, 16384
# Up to this many documents the scorer lends the exhaustive path an array of all of them
# (``whole_sums``, ADR 0041): 256 KiB, an eighth of a 2 MiB L2. It took 13-14% off the q8
# kernel at 100k documents on one machine, and lent at 1M (8 MiB) 14% off q8@100 there
# (ADR 0047); on others it cost 30-50% of every column at 1M (ADR 0048) and, at 60k and
# 100k, requests/s and 5-20 us a request after the kernel, where the array and a query's
# postings together pass the L2 and push the interpreter's working set out (ADR 0049). At
# 30k lent or not read the same.
WHOLE_DOCS = 1 << 15
# Plans with more query terms than this are scored exhaustively per window (ADR 0018).
MAX_PRUNED = 10
# MaxScore scores a plan (of at most MAX_PRUNED terms) whose longest query term holds at least
# ``at - slope * log10(postings / k)`` of its postings; every other plan is scored
# exhaustively. Fitted on per-query timings of both paths (syn100k, syn1m, four test
# collections; bench/prune_policy.py, ADR 0033): never 1% slower than pruning every plan of
# up to ten terms on any of them, up to 45% faster (syn100k q8 at k = 100). Refitted when
# the exhaustive path's filter got cheaper (ADR 0033, addendum), when it took the array of
# all documents at 1M (ADR 0047), and when that array was no longer lent past 2^15
# documents (ADR 0049): the rule fastest on average of those under which no column of those
# timings ran 1% slower than under the last, (1.375, 0.15); syn1m q8@10 13% faster.
PRUNE_SHARE = (1.475, 0.2)
# A window document's sum and its count of matched query terms share one int64,
# (sum << COUNT_BITS) + count: one array read and written per posting instead of two (the
# feedback pass 12-20% faster, ADR 0019). It holds plans of fewer than 2**COUNT_BITS terms
# whose bounds sum below 2**SUM_BITS; ``top_candidates`` declines any other.
COUNT_BITS = 8
COUNT_MASK = (1 << COUNT_BITS) - 1
SUM_BITS = 62 - COUNT_BITS


def _u(i: Any) -> Any:
    """``i`` as an unsigned index. numba wraps a negative signed index as Python does
    (``a[-1]``): a compare and a select per access, which also keeps LLVM from
    vectorizing; an unsigned one has neither. The hot loops index with it: their
    positions are never negative (1.3-1.8x on the postings loops, ADR 0020)."""
    return np.uint64(i)


def lowest_bit(m: Any) -> Any:
    """The index of the lowest set bit of ``m`` (a nonzero uint64), halving the word: numba's
    own intrinsic (one instruction) replaces it where numba has one."""
    n = _u(0)
    for half in (32, 16, 8, 4, 2, 1):
        if m & ((_u(1) << _u(half)) - _u(1)) == 0:
            n += _u(half)
            m >>= _u(half)
    return n


_ctz = lowest_bit


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


def _push(heap: Any, size: int, k: int, score: Any) -> int:
    """Offer ``score`` to a min-heap holding the k best so far; the new size."""
    if size < k:
        heap[size] = score
        j = size
        while j > 0 and heap[(j - 1) >> 1] > heap[j]:
            heap[(j - 1) >> 1], heap[j] = heap[j], heap[(j - 1) >> 1]
            j = (j - 1) >> 1
        return size + 1
    if score > heap[0]:
        heap[0] = score
        _sift_min(heap, k)
    return size


def _covered(u: Any, m: Any, cov_one: int, cov_c: int, distinct: int) -> Any:
    if cov_c == 0 or distinct == 0:
        return u
    return (u * ((cov_one - cov_c) * distinct + cov_c * np.int64(m))) // (cov_one * distinct)


def _weighted(v: Any, w: Any, wbits: int) -> Any:
    if w == (1 << wbits):
        return v
    return max((v * w) >> wbits, np.int64(1))


def _seek(docs: Any, p: Any, end: Any, d: Any) -> Any:
    """The first position in ``[p, end)`` whose document is >= d: gallop, then bisect.

    Candidates only grow, so a cursor moves forward; galloping makes a short move cost
    a step or two and a long one a logarithm, never a scan."""
    if p >= end or docs[_u(p)] >= d:
        return p
    step = np.int64(1)
    lo = p
    while lo + step < end and docs[_u(lo + step)] < d:
        lo += step
        step <<= 1
    hi = min(lo + step, end)
    lo += 1
    while lo < hi:
        mid = (lo + hi) >> 1
        if docs[_u(mid)] < d:
            lo = mid + 1
        else:
            hi = mid
    return lo


def _below(u: Any, m: Any, theta: Any, cov_one: int, cov_c: int, distinct: int) -> Any:
    """Whether ``_covered(u, m) < theta``, without the division (u >= 0)."""
    if cov_c == 0 or distinct == 0:
        return u < theta
    return u * ((cov_one - cov_c) * distinct + cov_c * np.int64(m)) < theta * (cov_one * distinct)


def _merge_into(ad: Any, av: Any, n: int, docs: Any, values: Any, s: int, e: int, w: Any,
                wbits: int, od: Any, ov: Any) -> Any:
    """``ad/av[:n]`` merged with the postings ``[s, e)`` weighted by ``w`` into ``od/ov``,
    one entry per document at its best value; the merged length."""
    # Unsigned throughout (``_u``), the steps too: uint64 plus a signed int is a float in
    # numba, as in numpy.
    i, p, m, un, ue, one = _u(0), _u(s), _u(0), _u(n), _u(e), _u(1)
    while i < un or p < ue:
        if p >= ue or (i < un and ad[i] < docs[p]):
            od[m], ov[m] = ad[i], av[i]
            i += one
        else:
            v = _weighted(np.int64(values[p]), w, wbits)
            if i < un and ad[i] == docs[p]:
                v = max(v, np.int64(av[i]))
                i += one
            od[m], ov[m] = docs[p], v
            p += one
        m += one
    return np.int64(m)


def _fold_small(docs: Any, impacts: Any, lists: Any, groups: Any, additive: Any, wbits: int,
                small: int, pool_d: Any, pool_v: Any) -> Any:
    """Each query term's short lists (prefix extensions, synonyms) merged into one list of
    their own, so a lookup seeks once in it instead of once in each. Returns the merged
    postings and the new list table, rows (source, start, end, weight, bound, qtf, count)
    where source 1 means the merged postings (already weighted: weight is one). The rows of
    an additive term are summed, not folded: they stay as they are.

    Rows starting at or past ``len(docs)`` are the pool's (``pool_d/pool_v``, offset by
    ``len(docs)``): groups the scorer merged before. With nothing left to fold, the pool
    itself is the merged postings (no copy); otherwise its ranges are copied in."""
    n_groups = len(groups) - 1
    one = np.int64(1) << wbits
    n_index = len(docs)
    folds = False
    for g in range(n_groups):
        shorts = 0
        for li in range(groups[g], groups[g + 1]):
            if lists[li, 0] < n_index and lists[li, 1] - lists[li, 0] < small:
                shorts += 1
        folds = folds or (shorts >= 2 and additive[g] == 0)
    if not folds:
        table = np.empty((len(lists), 7), dtype=np.int64)
        for li in range(len(lists)):
            table[li, 1:] = lists[li]
            table[li, 0] = 0
            if lists[li, 0] >= n_index:
                table[li, 0] = 1
                table[li, 1] -= n_index
                table[li, 2] -= n_index
        # A slice and a copy, as the folding path returns: numba needs one type per output.
        return pool_d, pool_v, table[:len(lists)], groups.copy()
    total = 0
    for li in range(len(lists)):
        if lists[li, 0] >= n_index or lists[li, 1] - lists[li, 0] < small:
            total += lists[li, 1] - lists[li, 0]
    merged_d = np.empty(total, dtype=np.int32)
    merged_v = np.empty(total, dtype=np.int32)
    a_d = np.empty(total, dtype=np.int32)
    a_v = np.empty(total, dtype=np.int32)
    b_d = np.empty(total, dtype=np.int32)
    b_v = np.empty(total, dtype=np.int32)
    table = np.empty((len(lists), 7), dtype=np.int64)
    new_groups = np.zeros(n_groups + 1, dtype=np.int64)
    rows, used = 0, 0
    for g in range(n_groups):
        shorts = 0
        for li in range(groups[g], groups[g + 1]):
            if lists[li, 0] < n_index and lists[li, 1] - lists[li, 0] < small:
                shorts += 1
        if additive[g] != 0:
            shorts = 0
        n = 0
        top = np.int64(0)
        for li in range(groups[g], groups[g + 1]):
            s, e = lists[li, 0], lists[li, 1]
            if s >= n_index:  # the pool's: copied in as it is
                merged_d[used:used + e - s] = pool_d[s - n_index:e - n_index]
                merged_v[used:used + e - s] = pool_v[s - n_index:e - n_index]
                table[rows, 0], table[rows, 1], table[rows, 2] = 1, used, used + e - s
                table[rows, 3:] = lists[li, 2:]
                rows += 1
                used += e - s
            elif shorts >= 2 and e - s < small:
                n = _merge_into(a_d, a_v, n, docs, impacts, s, e, lists[li, 2], wbits, b_d, b_v)
                a_d, b_d = b_d, a_d
                a_v, b_v = b_v, a_v
                top = max(top, lists[li, 3])
            else:
                table[rows, 0] = 0
                table[rows, 1:] = lists[li]
                rows += 1
        if shorts >= 2:
            merged_d[used:used + n] = a_d[:n]
            merged_v[used:used + n] = a_v[:n]
            table[rows, 0], table[rows, 1], table[rows, 2] = 1, used, used + n
            table[rows, 3], table[rows, 4], table[rows, 5] = one, top, lists[groups[g], 4]
            table[rows, 6] = 1
            rows += 1
            used += n
        new_groups[g + 1] = rows
    return merged_d, merged_v, table[:rows], new_groups


def _grown(a: Any, need: int) -> Any:
    """``a`` copied into an array of at least ``need`` entries (twice its size or more)."""
    b = np.empty(max(2 * len(a), need), dtype=a.dtype)
    b[:len(a)] = a
    return b


def _union(docs: Any, impacts: Any, rows: Any, wbits: int) -> Any:
    """The postings of ``rows`` (start, end, weight; shortest first) merged: each document
    once, at its best weighted value, as a query term of several lists is scored."""
    total = 0
    for r in range(len(rows)):
        total += rows[r, 1] - rows[r, 0]
    a_d = np.empty(total, dtype=np.int32)
    a_v = np.empty(total, dtype=np.int32)
    b_d = np.empty(total, dtype=np.int32)
    b_v = np.empty(total, dtype=np.int32)
    n = 0
    for r in range(len(rows)):
        n = _merge_into(a_d, a_v, n, docs, impacts, rows[r, 0], rows[r, 1], rows[r, 2], wbits,
                        b_d, b_v)
        a_d, b_d = b_d, a_d
        a_v, b_v = b_v, a_v
    return a_d[:n].copy(), a_v[:n].copy()


def _longest(lists: Any, lo: int, hi: int) -> int:
    """The row of ``lo:hi`` with the most postings (the first of equals)."""
    long = lo
    for li in range(lo + 1, hi):
        if lists[li, 2] - lists[li, 1] > lists[long, 2] - lists[long, 1]:
            long = li
    return long


def _gather(docs: Any, impacts: Any, merged_d: Any, merged_v: Any, lists: Any, lo: int,
            hi: int, skip: int, pos: Any, w0: int, w1: int, wbits: int, acc: Any, gval: Any,
            gt: Any, add: bool) -> int:
    """Each window document's best value over rows ``lo:hi`` except ``skip``, into ``gval``,
    the documents listed in ``gt`` (without ``add`` only those with ``acc > 0``); how many."""
    ng = 0
    for li in range(lo, hi):
        if li == skip:
            continue
        ds, vs = (docs, impacts) if lists[li, 0] == 0 else (merged_d, merged_v)
        w, e = lists[li, 3], lists[li, 2]
        p = _seek(ds, pos[li], e, w0)
        pe = _seek(ds, p, e, w1)
        for j in range(_u(p), _u(pe)):
            dl = _u(ds[j] - w0)
            if add or acc[dl] > 0:
                v = _weighted(np.int64(vs[j]), w, wbits)
                if gval[dl] == 0:
                    gt[_u(ng)] = dl
                    ng += 1
                if v > gval[dl]:
                    gval[dl] = v
        pos[li] = pe
    return ng


def _scan(docs: Any, impacts: Any, merged_d: Any, merged_v: Any, lists: Any, lo: int, hi: int,
          pos: Any, w0: int, w1: int, wbits: int, acc: Any, gval: Any, gt: Any,
          touched: Any, nt: int, add: bool, track: bool = True, additive: bool = False) -> int:
    """Accumulate one query term (list rows ``lo:hi``) over the window ``[w0, w1)``.

    With ``add``, documents met for the first time join ``touched`` (unless ``track`` is
    false: the exhaustive path keeps no list); without, only documents already there
    (``acc > 0``) are updated. Returns the new touched count. A term of one list, or an
    additive one, is added by the kernel's own loops, never here."""
    if hi == lo:  # a query term the index lacks: no lists
        return nt
    q = lists[lo, 5]
    if hi - lo == 1 or additive:
        if add:
            raise AssertionError("one-list and additive terms are added by the kernel's loop")
        for li in range(lo, hi):
            ds, vs = (docs, impacts) if lists[li, 0] == 0 else (merged_d, merged_v)
            w, e, c = lists[li, 3], lists[li, 2], lists[li, 6]
            p = _seek(ds, pos[li], e, w0)
            pe = _seek(ds, p, e, w1)
            for j in range(_u(p), _u(pe)):
                dl = _u(ds[j] - w0)
                if acc[dl] > 0:
                    acc[dl] += ((q * _weighted(np.int64(vs[j]), w, wbits)) << COUNT_BITS) + c
            pos[li] = pe
        return nt
    # Several lists: a document's value is its best among them. The shorter lists are
    # gathered in ``gval`` first; the longest (most of the postings) is then streamed with
    # no branch on ``gval``, taking a gathered value along; what is left in ``gval`` are
    # documents the longest list lacks. Gathering every list cost 1.5-2x per posting.
    long = _longest(lists, lo, hi)
    ng = _gather(docs, impacts, merged_d, merged_v, lists, lo, hi, long, pos, w0, w1, wbits,
                 acc, gval, gt, add)
    ds, vs = (docs, impacts) if lists[long, 0] == 0 else (merged_d, merged_v)
    w, e = lists[long, 3], lists[long, 2]
    p = _seek(ds, pos[long], e, w0)
    pe = _seek(ds, p, e, w1)
    for j in range(_u(p), _u(pe)):
        dl = _u(ds[j] - w0)
        if add or acc[dl] > 0:
            if track and acc[dl] == 0:
                touched[_u(nt)] = dl
                nt += 1
            v = max(_weighted(np.int64(vs[j]), w, wbits), gval[dl])
            acc[dl] += ((q * v) << COUNT_BITS) + 1
            gval[dl] = 0
    pos[long] = pe
    for i in range(_u(ng)):
        dl = _u(gt[i])
        if gval[dl] > 0:
            if track and acc[dl] == 0:
                touched[_u(nt)] = dl
                nt += 1
            acc[dl] += ((q * gval[dl]) << COUNT_BITS) + 1
            gval[dl] = 0
    return nt


def _probe(docs: Any, impacts: Any, merged_d: Any, merged_v: Any, lists: Any, lo: int, hi: int,
           pos: Any, w0: int, wbits: int, acc: Any, cand: Any, nc: int, gval: Any,
           additive: bool = False) -> None:
    """Look each candidate (ascending) up in one query term's lists; add its best value (an
    additive term: the sum of what each row holds, each row's count)."""
    if hi == lo:
        return
    q = lists[lo, 5]
    for li in range(lo, hi):
        ds, vs = (docs, impacts) if lists[li, 0] == 0 else (merged_d, merged_v)
        w, e, c = lists[li, 3], lists[li, 2], lists[li, 6]
        p = pos[li]
        for i in range(_u(nc)):
            d = w0 + cand[i]
            p = _seek(ds, p, e, d)
            if p < e and ds[_u(p)] == d:
                dl = _u(cand[i])
                v = _weighted(np.int64(vs[_u(p)]), w, wbits)
                if additive:
                    acc[dl] += ((q * v) << COUNT_BITS) + c
                else:
                    gval[dl] = max(gval[dl], v)
        pos[li] = p
    if additive:
        return
    for i in range(_u(nc)):
        dl = _u(cand[i])
        best = gval[dl]
        if best > 0:
            acc[dl] += ((q * best) << COUNT_BITS) + 1
            gval[dl] = 0


def _drop_hopeless(cand: Any, nc: int, acc: Any, rest: Any, left: int, theta: Any,
                   cov_one: int, cov_c: int, distinct: int) -> int:
    """Keep the candidates that ``rest`` more (from ``left`` more terms) could lift to
    ``theta``; reset the others. Returns how many are kept, in their order."""
    keep = 0
    for i in range(_u(nc)):
        dl = _u(cand[i])
        u, m = acc[dl] >> COUNT_BITS, acc[dl] & COUNT_MASK
        if _below(u + rest, min(m + left, distinct), theta, cov_one, cov_c, distinct):
            acc[dl] = 0
        else:
            cand[_u(keep)] = dl
            keep += 1
    return keep


def _packable(lists: Any, groups: Any) -> bool:
    """Whether every sum of the plan fits beside its matched count (``COUNT_BITS``)."""
    n_groups = len(groups) - 1
    if n_groups > COUNT_MASK:
        return False
    total = np.int64(0)
    for g in range(n_groups):
        top = np.int64(0)
        for li in range(groups[g], groups[g + 1]):
            top = max(top, lists[li, 3])
        if top >= np.int64(1) << SUM_BITS:
            return False
        total += top
        if total >= np.int64(1) << SUM_BITS:
            return False
    return True


def _prunes(length: Any, k: int, max_pruned: int, share_at: float, share_slope: float) -> bool:
    """Whether MaxScore should score a plan whose query terms hold ``length`` postings each
    (``PRUNE_SHARE``): speed only, both paths give the same documents and scores."""
    if len(length) > max_pruned:
        return False
    total = np.int64(0)
    longest = np.int64(0)
    for g in range(len(length)):
        total += length[g]
        longest = max(longest, length[g])
    if total == 0:
        return False
    return bool(longest >= (share_at - share_slope * np.log10(total / k)) * total)


def _top_candidates(docs: Any, impacts: Any, given: Any, given_groups: Any, additive: Any,
                    n_docs: int, wbits: int, k: int, cov_one: int, cov_c: int, distinct: int,
                    small: int,
                    window: int, max_pruned: int, share_at: float, share_slope: float,
                    pool_d: Any, pool_v: Any, whole_acc: Any) -> Any:
    if k <= 0 or len(given) == 0:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64), True
    if not _packable(given, given_groups):
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64), False
    merged_d, merged_v, lists, groups = _fold_small(docs, impacts, given, given_groups,
                                                    additive, wbits, small, pool_d, pool_v)
    n_groups = len(groups) - 1
    bound = np.zeros(n_groups, dtype=np.int64)  # the most a term adds to a document
    length = np.zeros(n_groups, dtype=np.int64)
    for g in range(n_groups):
        for li in range(groups[g], groups[g + 1]):
            bound[g] = max(bound[g], lists[li, 4])
            length[g] += lists[li, 2] - lists[li, 1]
    by_bound = np.argsort(bound, kind="mergesort")  # its prefix is the non-essential set
    exhaustive = not _prunes(length, k, max_pruned, share_at, share_slope)
    # All documents' sums in one array, where the caller lent one (``whole_sums``) and every
    # query term is one list (or none): ADR 0041.
    whole = exhaustive and len(whole_acc) >= n_docs + 63  # the last block read: whole_sums
    for g in range(n_groups):
        whole = whole and (groups[g + 1] - groups[g] <= 1 or additive[g] != 0)
    # Window-local, so it stays in cache; whole blocks of 64 (the exhaustive path's
    # filter reads them), the entries past the window never written. With the lent array
    # neither the window's sums nor a term's best (``_scan``'s) are used: zeroing them cost
    # 128 KB of writes a call at 100k documents, which push the caller's data out of cache.
    acc = np.zeros(0 if whole else (window + 63) // 64 * 64, dtype=np.int64)
    gval = np.zeros(0 if whole else window, dtype=np.int64)
    gt = np.empty(window, dtype=np.int32)
    touched = np.empty(window, dtype=np.int32)
    cand = np.empty(window, dtype=np.int32)
    pos = lists[:, 1].copy()
    heap = np.empty(k, dtype=np.int64)
    size = 0
    theta = np.int64(-1)  # a lower bound of the final k-th best score: keep >= theta
    out_d = np.empty(1024, dtype=np.int64)
    out_s = np.empty(1024, dtype=np.int64)
    n_out = 0
    n_ne = 0  # terms by_bound[:n_ne] are non-essential: together they stay below theta
    ne_total = np.int64(0)
    one = np.int64(1) << wbits
    if whole:
        # Each term's postings added in one run: per window and term, two seeks and a loop's
        # start cost ~100 ns, a fifth of the q8 kernel at 100k documents. The windows are
        # then scored in the same order, against the same cuts. The loop repeats the
        # per-window one below: one loop over spans (a window, or every document) cost the
        # q8 kernel 4-8% more.
        for li in range(len(lists)):  # every row of every term: one list each, or additive
            ds, vs = (docs, impacts) if lists[li, 0] == 0 else (merged_d, merged_v)
            q, w, p, e, c = lists[li, 5], lists[li, 3], lists[li, 1], lists[li, 2], lists[li, 6]
            if w == one:
                for j in range(_u(p), _u(e)):
                    whole_acc[_u(ds[j])] += ((q * np.int64(vs[j])) << COUNT_BITS) + c
            else:
                for j in range(_u(p), _u(e)):
                    v = _weighted(np.int64(vs[j]), w, wbits)
                    whole_acc[_u(ds[j])] += ((q * v) << COUNT_BITS) + c
        acc = whole_acc
    if exhaustive:
        # Many terms of small weight (a feedback query, ADR 0018), or no one long list to
        # skip (ADR 0033): pruning keeps most candidates and costs more than it saves.
        # Every posting is added (above, or per window here); the window's matches are
        # scored against the cut.
        for w0 in range(0, n_docs, window):
            w1 = min(w0 + window, n_docs)
            at = _u(w0) if whole else _u(0)  # the window's first document in ``acc``
            for g in range(0 if whole else n_groups):
                lo = groups[g]
                if groups[g + 1] - lo != 1 and additive[g] == 0:  # several lists, or none
                    _scan(docs, impacts, merged_d, merged_v, lists, lo, groups[g + 1], pos, w0,
                          w1, wbits, acc, gval, gt, touched, 0, True, False)
                    continue
                # One list (or an additive term's rows, each): added here, not in a helper.
                # A call per window and term, even one numba inlines, cost ~100 ns: at 100k
                # documents a third of the path's fixed cost (ADR 0018, addendum 2).
                for li in range(lo, groups[g + 1]):
                    ds, vs = (docs, impacts) if lists[li, 0] == 0 else (merged_d, merged_v)
                    q, w, e, c = lists[li, 5], lists[li, 3], lists[li, 2], lists[li, 6]
                    p = _seek(ds, pos[li], e, w0)
                    pe = _seek(ds, p, e, w1)
                    if w == one:
                        for j in range(_u(p), _u(pe)):
                            acc[_u(ds[j] - w0)] += ((q * np.int64(vs[j])) << COUNT_BITS) + c
                    else:
                        for j in range(_u(p), _u(pe)):
                            v = _weighted(np.int64(vs[j]), w, wbits)
                            acc[_u(ds[j] - w0)] += ((q * v) << COUNT_BITS) + c
                    pos[li] = pe
            # The window's documents that may reach the cut. Every match sums to at least 1
            # (impacts and weights are), so a sum of at least max(theta, 1) says it (the
            # count's bits below it). Per block of 64 (fixed, so LLVM vectorizes the
            # compares; past the window's end the array is zero; blocks: ADR 0020), one bit
            # a document, and the set bits taken lowest first: the candidates in ascending
            # order. Timed alone over a window with 0-5% of its documents candidates, 0.04-0.07
            # ns a document, where blocks of 16 tested by their maximum and then compacted
            # without a branch took 0.25-0.37 (an int64 maximum vectorizes poorly); the
            # kernel's gain is in docs/ranking.md at commit 91e50cf.
            floor = max(theta, np.int64(1)) << COUNT_BITS
            nc = 0
            size_w = _u(w1 - w0)
            for b in range(_u((w1 - w0 + 63) // 64)):
                base = b * _u(64)
                reached = _u(0)
                for i in range(_u(64)):
                    reached |= _u(acc[at + base + i] >= floor) << i
                if base + _u(64) > size_w:  # a block past the window: the next one's sums
                    reached &= (_u(1) << (size_w - base)) - _u(1)
                while reached != 0:
                    cand[_u(nc)] = base + _ctz(reached)
                    nc += 1
                    reached &= reached - _u(1)
            if n_out + nc > len(out_d):  # room for every candidate, outside the loop below
                out_d = _grown(out_d, n_out + nc)
                out_s = _grown(out_s, n_out + nc)
            for i in range(_u(nc)):
                dl = cand[i]
                u, m = acc[at + _u(dl)] >> COUNT_BITS, acc[at + _u(dl)] & COUNT_MASK
                if _below(u, m, theta, cov_one, cov_c, distinct):
                    continue  # a product, not the division: most candidates stop here
                score = _covered(u, m, cov_one, cov_c, distinct)
                out_d[n_out] = dl + w0
                out_s[n_out] = score
                n_out += 1
                size = _push(heap, size, k, score)
                if size == k and heap[0] > theta:
                    theta = heap[0]
            for dl in range(size_w):  # a lent array is returned zero, as it was lent
                acc[at + dl] = 0
    # Every touched entry is zeroed before the next window (dropped candidates by
    # _drop_hopeless, the rest as they are scored): each window starts from zero arrays.
    for w0 in range(0, 0 if exhaustive else n_docs, window):
        w1 = min(w0 + window, n_docs)
        nt = 0
        for gi in range(n_ne, n_groups):
            g = by_bound[gi]
            lo = groups[g]
            if groups[g + 1] - lo != 1 and additive[g] == 0:  # several lists, or none
                nt = _scan(docs, impacts, merged_d, merged_v, lists, lo, groups[g + 1], pos,
                           w0, w1, wbits, acc, gval, gt, touched, nt, True)
                continue
            # One list (or an additive term's rows, each), added here rather than in a
            # helper (~100 ns a call, per window and essential term: ADR 0018, addendum 2).
            for li in range(lo, groups[g + 1]):
                ds, vs = (docs, impacts) if lists[li, 0] == 0 else (merged_d, merged_v)
                q, w, e, c = lists[li, 5], lists[li, 3], lists[li, 2], lists[li, 6]
                p = _seek(ds, pos[li], e, w0)
                pe = _seek(ds, p, e, w1)
                if nt == 0:
                    # The window's first list: every document is new (the arrays are all
                    # zero), so no branch per posting; 10-14% of the kernel on syn100k. Every
                    # value is at least 1, so a document's entry is nonzero once added.
                    for j in range(_u(p), _u(pe)):
                        dl = _u(ds[j] - w0)
                        touched[_u(nt)] = dl
                        nt += 1
                        acc[dl] = ((q * _weighted(np.int64(vs[j]), w, wbits)) << COUNT_BITS) + c
                else:
                    for j in range(_u(p), _u(pe)):
                        dl = _u(ds[j] - w0)
                        if acc[dl] == 0:
                            touched[_u(nt)] = dl
                            nt += 1
                        acc[dl] += ((q * _weighted(np.int64(vs[j]), w, wbits)) << COUNT_BITS) + c
                pos[li] = pe
        cand[:nt] = touched[:nt]
        nc = _drop_hopeless(cand, nt, acc, ne_total, n_ne, theta, cov_one, cov_c, distinct)
        rest = ne_total
        rest_at = rest
        ordered = False
        for gi in range(n_ne - 1, -1, -1):
            if nc == 0:
                break
            g = by_bound[gi]
            # A few candidates are looked up one by one; many are cheaper to scan for. A seek
            # costs tens of sequential steps: below 1/32 of the term's expected postings in
            # the window, probing wins (1/4 to 1/256 and never-probe measured; ADR 0010).
            if nc * 32 < length[g] * (w1 - w0) // n_docs + 1:
                if not ordered:
                    cand[:nc].sort()
                    ordered = True
                _probe(docs, impacts, merged_d, merged_v, lists, groups[g], groups[g + 1], pos,
                       w0, wbits, acc, cand, nc, gval, additive[g] != 0)
            else:
                _scan(docs, impacts, merged_d, merged_v, lists, groups[g], groups[g + 1], pos,
                      w0, w1, wbits, acc, gval, gt, touched, 0, False, True, additive[g] != 0)
            rest -= bound[g]
            # Filter again only once the bound left has fallen by a quarter: a light term
            # drops few candidates, and a pass over them all per term cost 5-9% (ADR 0018).
            if gi == 0 or (rest_at - rest) * 4 >= rest_at:
                nc = _drop_hopeless(cand, nc, acc, rest, gi, theta, cov_one, cov_c, distinct)
                rest_at = rest
        if n_out + nc > len(out_d):  # room for every survivor, outside the loop below
            out_d = _grown(out_d, n_out + nc)
            out_s = _grown(out_s, n_out + nc)
        for i in range(_u(nc)):
            dl = cand[i]
            u, m = acc[_u(dl)] >> COUNT_BITS, acc[_u(dl)] & COUNT_MASK
            acc[_u(dl)] = 0
            if u < theta:
                continue  # covered(u) <= u: no need to divide
            score = _covered(u, m, cov_one, cov_c, distinct)
            if score < theta:
                continue
            out_d[n_out] = dl + w0
            out_s[n_out] = score
            n_out += 1
            size = _push(heap, size, k, score)
            if size == k and heap[0] > theta:
                theta = heap[0]
                while n_ne < n_groups and ne_total + bound[by_bound[n_ne]] < theta:
                    ne_total += bound[by_bound[n_ne]]
                    n_ne += 1
    cut = heap[0] if size == k else np.int64(-1)
    keep = 0
    for i in range(n_out):
        if out_s[i] >= cut:
            out_d[keep] = out_d[i]
            out_s[keep] = out_s[i]
            keep += 1
    return out_d[:keep].copy(), out_s[:keep].copy(), True


if njit is not None:
    # Inlined into the kernel: a compiled call passing arrays costs an atomic reference
    # count per array, which was a tenth of the kernel's time (ADR 0018). The helpers run
    # once a window or a list (_scan, _gather, _probe, ...) are called instead: there the
    # call costs nothing measurable, and inlining them at every site cost 10-20% of a cold
    # compile.
    # numba's own count of trailing zeros where its internal module has it.
    _ctz = njit(cache=True, nogil=True, inline='always',
                intrinsic=("numba.cpython.unsafe.numbers", "trailing_zeros"))(lowest_bit)
    _sift_min = njit(cache=True, nogil=True, inline='always')(_sift_min)
    _push = njit(cache=True, nogil=True, inline='always')(_push)
    _covered = njit(cache=True, nogil=True, inline='always')(_covered)
    _weighted = njit(cache=True, nogil=True, inline='always')(_weighted)
    _seek = njit(cache=True, nogil=True, inline='always')(_seek)
    _below = njit(cache=True, nogil=True, inline='always')(_below)
    _u = njit(cache=True, nogil=True, inline='always')(_u)
    _merge_into = njit(cache=True, nogil=True)(_merge_into)
    _fold_small = njit(cache=True, nogil=True)(_fold_small)
    _scan = njit(cache=True, nogil=True)(_scan)
    _longest = njit(cache=True, nogil=True)(_longest)
    _gather = njit(cache=True, nogil=True)(_gather)
    _probe = njit(cache=True, nogil=True)(_probe)
    _drop_hopeless = njit(cache=True, nogil=True)(_drop_hopeless)
    _grown = njit(cache=True, nogil=True)(_grown)
    _union = njit(cache=True, nogil=True)(_union)
    _packable = njit(cache=True, nogil=True)(_packable)
    _prunes = njit(cache=True, nogil=True)(_prunes)


_kernel = njit(cache=True, nogil=True)(_top_candidates) if njit is not None else None


def top_candidates(docs: npt.NDArray[np.int32], impacts: npt.NDArray[np.int32],
                   lists: npt.NDArray[np.int64], groups: npt.NDArray[np.int64],
                   additive: npt.NDArray[np.int64], n_docs: int, wbits: int, k: int,
                   cov_one: int, cov_c: int, distinct: int, window: int | None = None,
                   pool: tuple[Any, Any] | None = None,
                   sums: npt.NDArray[np.int64] | None = None) -> tuple[Any, Any] | None:
    """Documents scoring at least the k-th best score (ties included) and their scores;
    None for a plan the packed sums cannot hold (``COUNT_BITS``): score it otherwise.

    ``lists`` rows are (start, end, weight, bound, qtf, count): a postings range, the weight
    its impacts are scaled by, the most its query term can add to a document (qtf and weight
    applied), the term's count in the query, and what a document found in it adds to its
    matched count (1, or 0: see below); query term ``g`` owns rows ``groups[g]:groups[g+1]``.
    A term's value for a document is the best of its rows, or, where ``additive[g]`` is not
    0, their sum: a list of the index plus the pool's parts of its other lists
    (``unions.py``), whose count-0 row holds only documents the others hold. A row starting
    at ``len(docs)`` or past it is a range of ``pool`` (documents and values, offset by
    ``len(docs)``). ``sums`` (``whole_sums(n_docs)``), if given, is where an exhaustive plan
    adds its sums: it must be zero, it is zero again on return, and no other call may use it
    meanwhile.
    """
    assert _kernel is not None
    pool_d, pool_v = pool if pool is not None else (_EMPTY, _EMPTY)
    ords, scores, held = _kernel(docs, impacts, lists, groups, additive, n_docs, wbits, k,
                                 cov_one, cov_c, distinct, SMALL_LIST,
                                 window or (WINDOW if n_docs < LARGE else LARGE_WINDOW),
                                 MAX_PRUNED, *PRUNE_SHARE, pool_d, pool_v,
                                 _EMPTY_SUMS if sums is None else sums)
    return (ords, scores) if held else None


def whole_sums(n_docs: int) -> npt.NDArray[np.int64]:
    """A zeroed array for the exhaustive path's sums of all ``n_docs`` documents (ADR 0041),
    lent by the caller and allocated once per scorer and concurrent call, not per request:
    fresh zeroed pages cost a fault each (50 us and more at 100k documents). The filter
    reads a window's sums in blocks of 64 from its first document, so the last block may end
    63 past the last document."""
    return np.zeros(n_docs + 63, dtype=np.int64)


_EMPTY = np.zeros(0, dtype=np.int32)
_EMPTY_SUMS = np.zeros(0, dtype=np.int64)


def union(docs: npt.NDArray[np.int32], impacts: npt.NDArray[np.int32],
          rows: npt.NDArray[np.int64], wbits: int) -> tuple[Any, Any]:
    """One query term's lists (rows of start, end, weight) merged into one: its documents,
    ascending, and each one's best weighted value (int32)."""
    assert njit is not None
    order = np.argsort(rows[:, 1] - rows[:, 0], kind="stable")  # shortest merged first
    return _union(docs, impacts, np.ascontiguousarray(rows[order]),  # type: ignore[no-any-return]
                  wbits)
