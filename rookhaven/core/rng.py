"""Seeded generators cyrb128 (string hash) and mulberry32 (uint32 stream), bit-exact with JS.

Both are defined on 32-bit unsigned integers so every platform computes the same values;
the float view (k / 2**32) is exact in binary64. Decisions inside Rookhaven use the integer
outputs, never the floats, so no rounding mode can change a choice.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from itertools import accumulate
from typing import Any

import numpy as np
import numpy.typing as npt

from .compiled import live, njit

_MASK = 0xFFFFFFFF


def _imul(a: int, b: int) -> int:
    """Math.imul: the low 32 bits of the product, as an unsigned value."""
    return (a * b) & _MASK


_SEED = (1779033703, 3144134277, 1013904242, 2773480762)

State = tuple[int, int, int, int]


def _code_units(text: str) -> memoryview:
    # The "utf-16" codec writes native byte order after a 2-byte BOM, which is the order
    # memoryview.cast("H") reads in, so the code units are right on any endianness.
    return memoryview(text.encode("utf-16", "surrogatepass")[2:]).cast("H")


def _absorb(state: State, units: Iterable[int]) -> State:
    """cyrb128's state after reading ``units`` (UTF-16 code units) from ``state``."""
    h1, h2, h3, h4 = state
    # Math.imul inlined (it is the hot path of every tie key): (a * b) & _MASK.
    m = _MASK
    for k in units:
        h1 = h2 ^ (((h1 ^ k) * 597399067) & m)
        h2 = h3 ^ (((h2 ^ k) * 2869860233) & m)
        h3 = h4 ^ (((h3 ^ k) * 951274213) & m)
        h4 = h1 ^ (((h4 ^ k) * 2716044179) & m)
    return h1, h2, h3, h4


def _finish(state: State) -> State:
    """cyrb128's final mix of a state into the four output words."""
    h1, h2, h3, h4 = state
    h1 = _imul(h3 ^ (h1 >> 18), 597399067)
    h2 = _imul(h4 ^ (h2 >> 22), 2869860233)
    h3 = _imul(h1 ^ (h3 >> 17), 951274213)
    h4 = _imul(h2 ^ (h4 >> 19), 2716044179)
    h1 ^= h2 ^ h3 ^ h4
    h2 ^= h1
    h3 ^= h1
    h4 ^= h1
    return h1, h2, h3, h4


def cyrb128_reference(text: str) -> State:
    """cyrb128 in plain Python: the reference the compiled path must equal."""
    return _finish(_absorb(_SEED, _code_units(text)))


def _cyrb128_segments(prefix: Any, units: Any, starts: Any, stops: Any) -> Any:
    """cyrb128 of ``prefix`` followed by each ``units[starts[j]:stops[j]]``, one row of four
    per segment.

    Written for numba: uint64 lanes masked to 32 bits, the same steps as ``_absorb`` and
    ``_finish``. Segments may lie anywhere in ``units``: a batch of texts laid end to end,
    or chosen entries of a corpus's ids (``CodeUnits``).
    """
    m = np.uint64(_MASK)
    out = np.empty((len(starts), 4), dtype=np.uint64)
    p1, p2 = np.uint64(_SEED[0]), np.uint64(_SEED[1])
    p3, p4 = np.uint64(_SEED[2]), np.uint64(_SEED[3])
    for i in range(len(prefix)):
        k = np.uint64(prefix[i])
        p1 = p2 ^ (((p1 ^ k) * np.uint64(597399067)) & m)
        p2 = p3 ^ (((p2 ^ k) * np.uint64(2869860233)) & m)
        p3 = p4 ^ (((p3 ^ k) * np.uint64(951274213)) & m)
        p4 = p1 ^ (((p4 ^ k) * np.uint64(2716044179)) & m)
    for j in range(len(starts)):
        h1, h2, h3, h4 = p1, p2, p3, p4
        for i in range(starts[j], stops[j]):
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
        out[j, 0], out[j, 1], out[j, 2], out[j, 3] = h1, h2 ^ h1, h3 ^ h1, h4 ^ h1
    return out


# Every tie key and stream seed is a cyrb128; compiled it is ~14x faster than the loop above,
# and hashing a batch in one call saves the per-call overhead of each.
_COMPILED = njit(cache=True, nogil=True)(_cyrb128_segments) if njit is not None else None
_UTF16 = np.dtype("<u2")  # built once: parsing a dtype string costs more than the hash


def _utf16(text: str) -> npt.NDArray[np.uint16]:
    return np.frombuffer(text.encode("utf-16-le", "surrogatepass"), _UTF16)


def cyrb128(text: str) -> State:
    """Hash ``text`` to four uint32 values, reading UTF-16 code units like ``charCodeAt``."""
    if _COMPILED is None or not live():
        return cyrb128_reference(text)
    h1, h2, h3, h4 = cyrb128_many(text, [""]).tolist()[0]
    return h1, h2, h3, h4


def cyrb128_many(prefix: str, texts: Sequence[str]) -> npt.NDArray[np.uint64]:
    """``cyrb128(prefix + t)`` for every ``t`` in ``texts``, one row of four per text.

    The prefix is read once and the batch is hashed in one call, which is what makes a
    request's tie keys cheap.
    """
    if _COMPILED is None or not live():
        state = _absorb(_SEED, _code_units(prefix))
        rows = [_finish(_absorb(state, _code_units(t))) for t in texts]
        return np.array(rows, dtype=np.uint64).reshape(len(rows), 4)
    whole = prefix + "".join(texts)
    units = _utf16(whole)
    if len(units) == len(whole):  # no astral characters: one code unit per character
        ends = accumulate(map(len, texts), initial=len(prefix))
    else:
        ends = accumulate((len(_utf16(t)) for t in texts), initial=len(_utf16(prefix)))
    bounds = np.array(list(ends), dtype=np.int64)
    return _COMPILED(units[:bounds[0]], units, bounds[:-1], bounds[1:])  # type: ignore[no-any-return]


class Labels:
    """Fixed texts hashed after a varying prefix (``cyrb128_labelled``), their code units
    laid out once: a request's stream seeds skip joining and measuring them each time."""

    __slots__ = ("starts", "stops", "texts", "units")

    def __init__(self, *texts: str) -> None:
        self.texts = texts
        laid = CodeUnits(texts)
        self.units = laid.units
        self.starts, self.stops = laid.offsets[:-1].copy(), laid.offsets[1:].copy()


def cyrb128_labelled(prefix: str, labels: Labels) -> npt.NDArray[np.uint64]:
    """``cyrb128_many(prefix, labels.texts)``, one row of four per label."""
    if _LABELLED is None or not live():
        return cyrb128_many(prefix, labels.texts)
    return _LABELLED(prefix.encode("utf-16-le", "surrogatepass"),  # type: ignore[no-any-return]
                     labels.units, labels.starts, labels.stops)


def _labelled(prefix: Any, units: Any, starts: Any, stops: Any) -> Any:
    """``_cyrb128_segments`` of a prefix given as UTF-16-LE bytes: read as code units in
    compiled code (a numpy view made per request cost as much as the hash)."""
    return segments(np.frombuffer(prefix, dtype=np.uint16), units, starts, stops)


_LABELLED = njit(cache=True, nogil=True)(_labelled) if njit is not None else None


class CodeUnits:
    """Texts' UTF-16 code units laid end to end, found by ordinal: ``units[offsets[i]:
    offsets[i + 1]]`` is text ``i``. A corpus's ids, so compiled code can hash any of them
    (``segments``) without a Python string per document."""

    __slots__ = ("offsets", "units")

    def __init__(self, texts: Sequence[str]) -> None:
        whole = "".join(texts)
        self.units = _utf16(whole)
        if len(self.units) == len(whole):
            lengths: Iterable[int] = map(len, texts)
        else:
            lengths = (len(_utf16(t)) for t in texts)
        self.offsets = np.fromiter(accumulate(lengths, initial=0), dtype=np.int64,
                                   count=len(texts) + 1)


def prefix_units(prefix: str) -> npt.NDArray[np.uint16]:
    """``prefix``'s UTF-16 code units, as ``segments`` reads a prefix."""
    return _utf16(prefix)


# The compiled loops themselves, for compiled callers (``select``, ``hitlists``); None
# without numba.
segments: Any = _COMPILED
labelled: Any = _LABELLED


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
