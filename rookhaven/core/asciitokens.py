"""ASCII text split into tokens and grouped by equal bytes in one compiled pass, for the
index builder: most of a build's time was making a string per token and looking it up.

For ASCII text, ``TextRules.split_tokens`` is lower-casing, every byte that is not a letter
or digit a gap, and maximal runs of the rest. ``classes`` finds the same runs and gives each
token the number of its class (tokens of equal bytes share one, numbered by first
appearance); the builder then makes a string per class, not per token. Classes are found
by a 64-bit hash in an open-addressing table, and every token is compared byte for byte
with its class's first token, so a hash collision is detected, never merged: ``classes``
then answers None and the caller takes the string path. Without numba it answers None too.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from .compiled import live, njit

_FNV_OFFSET = np.uint64(0xCBF29CE484222325)
_FNV_PRIME = np.uint64(0x100000001B3)
_EMPTY = -1
_MAX_BYTES = (1 << 31) - 1


def _classes(buf: Any, table: Any, seg_bounds: Any, seg_counts: Any,
             token_class: Any, first_start: Any, first_end: Any) -> int:
    """Fill ``token_class`` (one per token, in order), ``first_start``/``first_end`` (each
    class's first token) and ``seg_counts``; the number of classes, or -1 on a collision.
    ``table[b]`` is byte ``b`` lower-cased, or 0 for a gap."""
    capacity = 1 << 16
    slots = np.full(capacity, _EMPTY, dtype=np.int64)
    hashes = np.zeros(capacity, dtype=np.uint64)
    n_classes = 0
    n = 0
    for s in range(len(seg_bounds) - 1):
        i = seg_bounds[s]
        end = seg_bounds[s + 1]
        count = 0
        while i < end:
            if table[buf[i]] == 0:
                i += 1
                continue
            start = i
            h = _FNV_OFFSET
            while i < end and table[buf[i]] != 0:
                h = (h ^ np.uint64(table[buf[i]])) * _FNV_PRIME
                i += 1
            if 2 * (n_classes + 1) > capacity:  # keep the table at most half full
                capacity *= 2
                grown = np.full(capacity, _EMPTY, dtype=np.int64)
                grown_hashes = np.zeros(capacity, dtype=np.uint64)
                for j in range(len(slots)):
                    if slots[j] != _EMPTY:
                        k = np.int64(hashes[j] & np.uint64(capacity - 1))
                        while grown[k] != _EMPTY:
                            k = (k + 1) & (capacity - 1)
                        grown[k] = slots[j]
                        grown_hashes[k] = hashes[j]
                slots, hashes = grown, grown_hashes
            k = np.int64(h & np.uint64(capacity - 1))
            while slots[k] != _EMPTY and hashes[k] != h:
                k = (k + 1) & (capacity - 1)
            if slots[k] == _EMPTY:
                slots[k] = n_classes
                hashes[k] = h
                first_start[n_classes] = start
                first_end[n_classes] = i
                token_class[n] = n_classes
                n_classes += 1
            else:
                c = slots[k]
                a, b = first_start[c], first_end[c]
                if b - a != i - start:
                    return -1
                for j in range(i - start):
                    if table[buf[a + j]] != table[buf[start + j]]:
                        return -1
                token_class[n] = c
            n += 1
            count += 1
        seg_counts[s] = count
    return n_classes


def _count(buf: Any, table: Any) -> int:
    """How many tokens ``buf`` holds (runs of non-gap bytes)."""
    n = 0
    inside = False
    for i in range(len(buf)):
        word = table[buf[i]] != 0
        if word and not inside:
            n += 1
        inside = word
    return n


_CLASSES = njit(cache=True, nogil=True)(_classes) if njit is not None else None
_COUNT = njit(cache=True, nogil=True)(_count) if njit is not None else None


def byte_table(gaps: dict[int, str]) -> npt.NDArray[np.uint8]:
    """The lower-cased byte of every ASCII letter and digit, 0 for a gap (``gaps``: the
    code points ``TextRules`` turns into spaces) and for every byte past ASCII."""
    table = np.zeros(256, dtype=np.uint8)
    for c in range(128):
        if c not in gaps:
            table[c] = ord(chr(c).lower())
    return table


def classes(texts: list[str], table: npt.NDArray[np.uint8]
            ) -> tuple[list[str], npt.NDArray[np.int32], npt.NDArray[np.int64]] | None:
    """Every token of ``texts`` (each ASCII) as ``(class strings, each token's class, each
    text's token count)``; None without numba, while held, on a hash collision, if a text
    is not ASCII after all, or if together they pass 2 GiB (int32 positions)."""
    if _CLASSES is None or _COUNT is None or not live():
        return None
    text = "\n".join(texts) + "\n"  # "\n" is a gap: no token spans two texts
    if not text.isascii():
        return None
    joined = text.encode("ascii")
    del text
    if len(joined) > _MAX_BYTES:  # positions are kept in int32: past that, the string path
        return None
    buf = np.frombuffer(joined, dtype=np.uint8)
    bounds = np.zeros(len(texts) + 1, dtype=np.int64)
    np.cumsum([len(t) + 1 for t in texts], out=bounds[1:])
    n = _COUNT(buf, table)
    token_class = np.empty(n, dtype=np.int32)
    first_start = np.empty(n, dtype=np.int32)
    first_end = np.empty(n, dtype=np.int32)
    seg_counts = np.zeros(len(texts), dtype=np.int64)
    found = _CLASSES(buf, table, bounds, seg_counts, token_class, first_start, first_end)
    if found < 0:
        return None
    names = [joined[a:b].decode("ascii").lower()
             for a, b in zip(first_start[:found].tolist(), first_end[:found].tolist(),
                             strict=True)]
    return names, token_class, seg_counts
