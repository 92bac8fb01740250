"""Seeded generators cyrb128 (string hash) and mulberry32 (uint32 stream), bit-exact with JS.

Both are defined on 32-bit unsigned integers so every platform computes the same values;
the float view (k / 2**32) is exact in binary64. Decisions inside Rookhaven use the integer
outputs, never the floats, so no rounding mode can change a choice.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from .compiled import njit

_MASK = 0xFFFFFFFF


def _imul(a: int, b: int) -> int:
    """Math.imul: the low 32 bits of the product, as an unsigned value."""
    return (a * b) & _MASK


def cyrb128_reference(text: str) -> tuple[int, int, int, int]:
    """cyrb128 in plain Python: the reference the compiled path must equal."""
    h1, h2, h3, h4 = 1779033703, 3144134277, 1013904242, 2773480762
    # Math.imul inlined (it is the hot path of every tie key): (a * b) & _MASK. The
    # "utf-16" codec writes native byte order after a 2-byte BOM, which is the order
    # memoryview.cast("H") reads in, so the code units are right on any endianness.
    m = _MASK
    for k in memoryview(text.encode("utf-16", "surrogatepass")[2:]).cast("H"):
        h1 = h2 ^ (((h1 ^ k) * 597399067) & m)
        h2 = h3 ^ (((h2 ^ k) * 2869860233) & m)
        h3 = h4 ^ (((h3 ^ k) * 951274213) & m)
        h4 = h1 ^ (((h4 ^ k) * 2716044179) & m)
    h1 = _imul(h3 ^ (h1 >> 18), 597399067)
    h2 = _imul(h4 ^ (h2 >> 22), 2869860233)
    h3 = _imul(h1 ^ (h3 >> 17), 951274213)
    h4 = _imul(h2 ^ (h4 >> 19), 2716044179)
    h1 ^= h2 ^ h3 ^ h4
    h2 ^= h1
    h3 ^= h1
    h4 ^= h1
    return h1, h2, h3, h4


def _cyrb128_units(units: Any) -> Any:
    """cyrb128 over an array of UTF-16 code units, in uint64 lanes masked to 32 bits."""
    m = np.uint64(_MASK)
    h1, h2 = np.uint64(1779033703), np.uint64(3144134277)
    h3, h4 = np.uint64(1013904242), np.uint64(2773480762)
    for i in range(units.shape[0]):
        k = np.uint64(units[i])
        h1 = h2 ^ (((h1 ^ k) * np.uint64(597399067)) & m)
        h2 = h3 ^ (((h2 ^ k) * np.uint64(2869860233)) & m)
        h3 = h4 ^ (((h3 ^ k) * np.uint64(951274213)) & m)
        h4 = h1 ^ (((h4 ^ k) * np.uint64(2716044179)) & m)
    h1 = ((h3 ^ (h1 >> np.uint64(18))) * np.uint64(597399067)) & m
    h2 = ((h4 ^ (h2 >> np.uint64(22))) * np.uint64(2869860233)) & m
    h3 = ((h1 ^ (h3 >> np.uint64(17))) * np.uint64(951274213)) & m
    h4 = ((h2 ^ (h4 >> np.uint64(19))) * np.uint64(2716044179)) & m
    h1 ^= h2 ^ h3 ^ h4
    h2 ^= h1
    h3 ^= h1
    h4 ^= h1
    return h1, h2, h3, h4


# Every tie key and stream seed is a cyrb128; compiled it is ~14x faster than the loop above.
_COMPILED = njit(cache=True, nogil=True)(_cyrb128_units) if njit is not None else None


def cyrb128(text: str) -> tuple[int, int, int, int]:
    """Hash ``text`` to four uint32 values, reading UTF-16 code units like ``charCodeAt``."""
    if _COMPILED is None:
        return cyrb128_reference(text)
    units = np.frombuffer(text.encode("utf-16-le", "surrogatepass"), dtype="<u2")
    h1, h2, h3, h4 = _COMPILED(units)
    return int(h1), int(h2), int(h3), int(h4)


class Mulberry32:
    """A mulberry32 stream; iterate for floats in [0, 1) or call :meth:`next_uint32`."""

    __slots__ = ("_state",)

    def __init__(self, seed: int) -> None:
        if not 0 <= seed <= _MASK:
            raise ValueError(f"mulberry32 seed must be a uint32 (0..{_MASK}), got {seed}")
        self._state = seed

    def next_uint32(self) -> int:
        """Advance the stream and return the next raw uint32."""
        self._state = (self._state + 0x6D2B79F5) & _MASK
        t = self._state
        t = _imul(t ^ (t >> 15), t | 1)
        t ^= (t + _imul(t ^ (t >> 7), t | 61)) & _MASK
        return (t ^ (t >> 14)) & _MASK

    def next_float(self) -> float:
        """Advance the stream and return ``uint32 / 2**32``, exact in binary64."""
        return self.next_uint32() / 4294967296

    def below(self, bound: int) -> int:
        """An integer in ``[0, bound)`` by rejection sampling, so every value is equally likely."""
        if bound <= 0:
            raise ValueError(f"bound must be positive, got {bound}")
        limit = (1 << 32) - ((1 << 32) % bound)
        while True:
            value = self.next_uint32()
            if value < limit:
                return value % bound

    def __iter__(self) -> Iterator[float]:
        return self

    def __next__(self) -> float:
        return self.next_float()


def mulberry32(seed: int) -> Mulberry32:
    """Start a mulberry32 stream at ``seed`` (a uint32)."""
    return Mulberry32(seed)
