"""A brute-force RFC 9162 Merkle tree: MTH, PATH and SUBPROOF as the RFC text writes them.

Only for tests: it recurses over lists of leaf hashes (memoised on the range, so trees of
ten thousand leaves stay quick) and shares nothing with rookhaven.transparency.merkle but SHA-256.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence


def _h(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


def _k(n: int) -> int:
    """The largest power of two smaller than n (RFC 9162 2.1.1)."""
    k = 1
    while k * 2 < n:
        k *= 2
    return k


class ReferenceTree:
    """MTH, PATH and PROOF over a fixed list of leaf hashes; sub-lists are index ranges."""

    def __init__(self, leaf_hashes: Sequence[bytes]) -> None:
        self.leaves = list(leaf_hashes)
        self._mth: dict[tuple[int, int], bytes] = {}

    def mth(self, lo: int, hi: int) -> bytes:
        """MTH(D[lo:hi])."""
        if (lo, hi) not in self._mth:
            n = hi - lo
            if n == 0:
                value = _h(b"")
            elif n == 1:
                value = self.leaves[lo]
            else:
                k = _k(n)
                value = _h(b"\x01" + self.mth(lo, lo + k) + self.mth(lo + k, hi))
            self._mth[(lo, hi)] = value
        return self._mth[(lo, hi)]

    def path(self, m: int, lo: int, hi: int) -> list[bytes]:
        """PATH(m, D[lo:hi]) with m relative to lo."""
        n = hi - lo
        if n == 1:
            return []
        k = _k(n)
        if m < k:
            return [*self.path(m, lo, lo + k), self.mth(lo + k, hi)]
        return [*self.path(m - k, lo + k, hi), self.mth(lo, lo + k)]

    def subproof(self, m: int, lo: int, hi: int, b: bool) -> list[bytes]:
        """SUBPROOF(m, D[lo:hi], b) with m relative to lo."""
        n = hi - lo
        if m == n:
            return [] if b else [self.mth(lo, hi)]
        k = _k(n)
        if m <= k:
            return [*self.subproof(m, lo, lo + k, b), self.mth(lo + k, hi)]
        return [*self.subproof(m - k, lo + k, hi, False), self.mth(lo, lo + k)]

    def inclusion(self, index: int, size: int) -> list[bytes]:
        return self.path(index, 0, size)

    def consistency(self, old: int, new: int) -> list[bytes]:
        return self.subproof(old, 0, new, True)

    def complete_subtrees(self, size: int) -> dict[tuple[int, int], bytes]:
        """Every complete subtree of the first ``size`` leaves, by (level, index)."""
        nodes = {}
        level = 0
        while (1 << level) <= size:
            width = 1 << level
            for index in range(size // width):
                nodes[(level, index)] = self.mth(index * width, (index + 1) * width)
            level += 1
        return nodes
