"""The canonical bytes of a result's hit and contribution lists, written by compiled code.

A top-100 result holds some 200 small objects (its hits, and the contributions its audit
lists). Built as dicts and then encoded they cost more than everything else a request does
outside the kernel (docs/ranking.md, ADR 0034). Here the corpus's ids are JSON-encoded once,
end to end (``IdStrings``), the scores are written by orjson (the shortest round-trip form
that canonical bytes use), and a compiled loop copies both into a list's bytes, which
``orjson.Fragment`` places in the result as they are.

The bytes equal orjson's encoding of the same lists as plain data (keys sorted, no spaces):
``Retriever.result_data`` is the reference, and the tests hold the two to each other.
For a query that is its own one part, ``one_part`` writes the whole result, its audit
around the lists, in the same call that ranks the cut (ADR 0049).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import accumulate, chain
from typing import Any

import numpy as np
import numpy.typing as npt
import orjson

from .canonical import RESULT_HEAD, RESULT_HITS, mentions_null
from .compiled import njit
from .rng import CodeUnits, labelled
from .select import Picks, TieKeys, _rank, seed_prefix
from .streams import STREAM_LABELS, stream_prefix

_QUOTE, _BACKSLASH = 34, 92


def _array(data: bytes) -> npt.NDArray[np.uint8]:
    """``data`` as the array of bytes a compiled writer copies (``_put``)."""
    return np.frombuffer(data, dtype=np.uint8)


# The parts of each object, keys in sorted order as canonical bytes write them.
_ID = _array(b'{"id":')
_RANK = _array(b',"rank":')
_SCORE = _array(b',"score":')
_SUBQUERIES = _array(b',"subqueries":[')


def _string_offsets(blob: Any, n: int) -> Any:
    """Where each of the ``n`` strings of the JSON array ``blob`` starts; entry ``n`` is one
    past the closing bracket, so string ``i`` spans ``offsets[i]:offsets[i + 1] - 1``."""
    offsets = np.empty(n + 1, dtype=np.int64)
    p = 1  # past '['
    for i in range(n):
        offsets[i] = p
        p += 1  # the opening quote
        while blob[p] != _QUOTE:
            # A backslash escapes the byte after it; UTF-8's multi-byte sequences hold
            # neither a quote nor a backslash.
            p += 2 if blob[p] == _BACKSLASH else 1
        p += 2  # the closing quote, and the ',' or ']' after it
    offsets[n] = p
    return offsets


# Indices are cast to unsigned where the loops read and write: numba wraps a negative
# signed index as Python does, a compare per access (core.providers.kernel, ADR 0020).
def _put(out: Any, p: int, part: Any) -> int:
    for i in range(len(part)):
        out[np.uint64(p + i)] = part[np.uint64(i)]
    return p + len(part)


def _put_int(out: Any, p: int, value: int) -> int:
    """``value`` (>= 0) in decimal at ``out[p:]``; returns the end."""
    digits = 1
    rest = value // 10
    while rest > 0:
        digits += 1
        rest //= 10
    for i in range(digits - 1, -1, -1):
        out[np.uint64(p + i)] = 48 + value % 10
        value //= 10
    return p + digits


def _number_offsets(scores: Any, n: int) -> Any:
    """Where each of the ``n`` numbers of the JSON array ``scores`` starts; entry ``n`` is
    one past the closing bracket, so number ``i`` spans ``offsets[i]:offsets[i + 1] - 1``."""
    offsets = np.empty(n + 1, dtype=np.int64)
    p = 1  # past '['
    for i in range(n):
        offsets[i] = p
        while scores[np.uint64(p)] != 44 and scores[np.uint64(p)] != 93:  # ',' or ']'
            p += 1
        p += 1
    offsets[n] = p
    return offsets


def _write(out: Any, p: int, blob: Any, offsets: Any, ords: Any, scores: Any,
           score_offsets: Any, at: Any, hits: bool, subs: Any, sub_offsets: Any) -> int:
    """The JSON array of one object per ordinal of ``ords`` at ``out[p:]``: its id, its
    score (number ``at[i]`` of the JSON array ``scores``, or number ``i`` if ``at`` is
    empty; ``score_offsets`` as ``_number_offsets`` gives), and for ``hits`` its rank
    (from 1) and its subqueries (``subs[sub_offsets[i]:sub_offsets[i + 1]]``, or [0] for
    every hit if ``sub_offsets`` is empty). Returns the end."""
    out[np.uint64(p)] = 91  # '['
    p += 1
    for i in range(len(ords)):
        if i > 0:
            out[np.uint64(p)] = 44  # ','
            p += 1
        p = _put(out, p, _ID)
        o = np.uint64(ords[i])
        start, end = offsets[o], offsets[o + np.uint64(1)] - 1
        for j in range(start, end):
            out[np.uint64(p)] = blob[np.uint64(j)]
            p += 1
        if hits:
            p = _put(out, p, _RANK)
            p = _put_int(out, p, i + 1)
        p = _put(out, p, _SCORE)
        n = np.uint64(at[i] if len(at) > 0 else i)
        for j in range(score_offsets[n], score_offsets[n + np.uint64(1)] - 1):
            out[np.uint64(p)] = scores[np.uint64(j)]
            p += 1
        if hits:
            p = _put(out, p, _SUBQUERIES)
            if len(sub_offsets) == 0:
                out[np.uint64(p)] = 48  # '0'
                p += 1
            else:
                for j in range(sub_offsets[i], sub_offsets[i + 1]):
                    if j > sub_offsets[i]:
                        out[np.uint64(p)] = 44
                        p += 1
                    p = _put_int(out, p, subs[j])
            out[np.uint64(p)] = 93  # ']'
            p += 1
        out[np.uint64(p)] = 125  # '}'
        p += 1
    out[np.uint64(p)] = 93
    return p + 1


def _lists_size(offsets: Any, ords: Any, n_score_bytes: int, sub_offsets: Any) -> int:
    """At least the bytes ``_write`` needs for the contributions and the hits of ``ords``
    (``n_score_bytes``: the length of the scores' JSON array)."""
    size = 2 * (2 + n_score_bytes)
    for i in range(len(ords)):
        # Per list: the id, the keys and the closing brace; for a hit, its rank (at most 20
        # digits) and its subqueries (each at most 20 digits and a comma) in brackets.
        one = offsets[ords[i] + 1] - 1 - offsets[ords[i]] + len(_ID) + len(_SCORE) + 1
        size += 2 * one + len(_RANK) + 20 + len(_SUBQUERIES) + 1 + 21
        if len(sub_offsets) > 0:
            size += 21 * (sub_offsets[i + 1] - sub_offsets[i])
    return size


def _lists(blob: Any, offsets: Any, ords: Any, scores: Any, n_scores: int, at: Any,
           contributions: bool, hits: bool, subs: Any, sub_offsets: Any) -> Any:
    """The contributions' array (if ``contributions``) then the hits' (if ``hits``) of the
    same documents, end to end (``_write``; ``scores`` holds ``n_scores`` numbers); and
    where the second begins."""
    out = np.empty(_lists_size(offsets, ords, len(scores), sub_offsets), dtype=np.uint8)
    starts = _number_offsets(scores, n_scores)
    split = 0
    if contributions:
        split = _write(out, 0, blob, offsets, ords, scores, starts, at, False, subs,
                       sub_offsets)
    end = split
    if hits:
        end = _write(out, split, blob, offsets, ords, scores, starts, at, True, subs,
                     sub_offsets)
    return out[:end], split


def _ranked_lists(blob: Any, offsets: Any, ords: Any, units: Any, k: int, seed: Any,
                  id_units: Any, id_offsets: Any, scores: Any) -> Any:
    """The best ``k`` candidates ranked (``select._rank`` under ranking stream ``seed``) and
    written as a one-part query's contributions then hits (``_lists``; ``scores`` holds
    each candidate's number, in the candidates' order): the bytes, where the hits begin,
    the picks' ordinals then their scores in one array, and the tie keys hashed."""
    at, learned = _rank(ords, units, k, seed_prefix(seed), id_units, id_offsets)
    at = at[:k]
    n = len(at)
    picks = np.empty(2 * n, dtype=np.int64)
    for i in range(n):
        picks[i], picks[n + i] = ords[at[i]], units[at[i]]
    none = np.zeros(0, dtype=np.int64)
    encoded, split = _lists(blob, offsets, picks[:n], scores, len(units), at, True, True,
                            none, none)
    return encoded, split, picks, learned


# A one-part result's bytes between its own values: the audit's keys in canonical (sorted)
# order, its first ones in the retriever's frame (``Retriever._audit_frame``).
_RESULT_HEAD = _array(RESULT_HEAD)
_RESULT_HITS = _array(RESULT_HITS)
_TRUE = _array(b"true")
_FALSE = _array(b"false")
_RECALL_BUDGET = _array(b',"recall_budget":')
_SEED = _array(b',"seed":')
_ALLOCATION = _array(b',"streams":{"allocation":')
_RANKING = _array(b',"ranking":')
_PART_BUDGET = _array(b'},"subqueries":[{"budget":')
_CONTRIBUTED = _array(b',"contributed":')
_TERMS = _array(b',"terms":')
_TEXT = _array(b',"text":')
_WEIGHT = _array(b',"weight":')
_PART_END = _array(b"}]}")
_KEYS = sum(map(len, (_RESULT_HEAD, _RESULT_HITS, _FALSE, _RECALL_BUDGET, _SEED, _ALLOCATION,
                      _RANKING, _PART_BUDGET, _CONTRIBUTED, _TERMS, _TEXT, _WEIGHT, _PART_END)))


def _one_part(blob: Any, offsets: Any, ords: Any, units: Any, k: int, prefix: Any,
              id_units: Any, id_offsets: Any, scores: Any, head: Any, middle: Any,
              query: Any, seed: Any, terms: Any, decompose: bool, weight: int) -> Any:
    """A one-part query's whole result, its audit inside it: the streams' seeds derived
    (the first words of cyrb128 of ``prefix``, UTF-16-LE bytes, and each label, as
    ``streams.derive_streams`` makes them), the best ``k`` candidates ranked under the
    ranking stream (``select._rank``), and every byte written around the request's values
    (``query``, ``seed`` and ``terms`` JSON-encoded) in canonical order: the audit's frame
    (``head``, the decompose flag, ``middle``), its values, the part with its contributions,
    then the hits. Returns the bytes, where the audit ends (it begins after
    ``RESULT_HEAD``) and how many candidates were picked."""
    rows = labelled(prefix, _LABEL_UNITS, _LABEL_STARTS, _LABEL_STOPS)
    allocation: Any = np.int64(rows[0, 0])  # uint32 each
    ranking: Any = np.int64(rows[1, 0])
    at, _ = _rank(ords, units, k, seed_prefix(ranking), id_units, id_offsets)
    at = at[:k]
    picked = ords[at]
    none = np.zeros(0, dtype=np.int64)
    # Each number the frame holds (a budget twice, two seeds, the weight) in at most 20
    # digits, and the result's closing brace: no write is checked against the end.
    size = (_lists_size(offsets, picked, len(scores), none) + len(head) + len(middle)
            + 2 * len(query) + len(seed) + len(terms) + _KEYS + 5 * 20 + 1)
    out = np.empty(size, dtype=np.uint8)
    p = _put(out, 0, _RESULT_HEAD)
    p = _put(out, p, head)
    p = _put(out, p, _TRUE) if decompose else _put(out, p, _FALSE)
    p = _put(out, p, middle)
    p = _put(out, p, query)
    p = _put(out, p, _RECALL_BUDGET)
    p = _put_int(out, p, k)
    p = _put(out, p, _SEED)
    p = _put(out, p, seed)
    p = _put(out, p, _ALLOCATION)
    p = _put_int(out, p, allocation)
    p = _put(out, p, _RANKING)
    p = _put_int(out, p, ranking)
    p = _put(out, p, _PART_BUDGET)
    p = _put_int(out, p, k)
    p = _put(out, p, _CONTRIBUTED)
    starts = _number_offsets(scores, len(units))
    p = _write(out, p, blob, offsets, picked, scores, starts, at, False, none, none)
    p = _put(out, p, _TERMS)
    p = _put(out, p, terms)
    p = _put(out, p, _TEXT)
    p = _put(out, p, query)
    p = _put(out, p, _WEIGHT)
    p = _put_int(out, p, weight)
    audit_end = _put(out, p, _PART_END)
    p = _put(out, audit_end, _RESULT_HITS)
    p = _write(out, p, blob, offsets, picked, scores, starts, at, True, none, none)
    out[np.uint64(p)] = 125  # '}'
    return out[:p + 1], audit_end, len(at)


_LABEL_UNITS, _LABEL_STARTS, _LABEL_STOPS = (STREAM_LABELS.units, STREAM_LABELS.starts,
                                             STREAM_LABELS.stops)


if njit is not None:
    _put = njit(cache=True, nogil=True, inline="always")(_put)
    _put_int = njit(cache=True, nogil=True, inline="always")(_put_int)
    _write = njit(cache=True, nogil=True)(_write)
    _number_offsets = njit(cache=True, nogil=True)(_number_offsets)
    _lists_size = njit(cache=True, nogil=True)(_lists_size)
    _lists = njit(cache=True, nogil=True)(_lists)
    _LISTS: Any = _lists
    _ranked_lists = njit(cache=True, nogil=True)(_ranked_lists)
    _RANKED_LISTS: Any = _ranked_lists
    _ONE_PART: Any = njit(cache=True, nogil=True)(_one_part)
    _STRING_OFFSETS: Any = njit(cache=True, nogil=True)(_string_offsets)
else:  # pragma: no cover - exercised where numba is absent
    _LISTS = _RANKED_LISTS = _ONE_PART = _STRING_OFFSETS = None


class IdStrings:
    """A corpus's ids as JSON strings laid end to end, found by ordinal, for the writers
    below (``contributions``, ``hits``, ``picked``)."""

    __slots__ = ("blob", "offsets")

    def __init__(self, ids: Sequence[str]) -> None:
        assert _STRING_OFFSETS is not None, "compiled lists need numba"
        self.blob: npt.NDArray[np.uint8] = np.frombuffer(orjson.dumps(list(ids)),
                                                         dtype=np.uint8)
        self.offsets: npt.NDArray[np.int64] = _STRING_OFFSETS(self.blob, len(ids))


_NO_SUBS = np.zeros(0, dtype=np.int64)
# Scores up to this many are written from a list of floats, more from a numpy array: the
# same bytes, and each way is the cheaper one on its side (ten: 1.0 us against 1.5).
FEW_SCORES = 32
_EMPTY = orjson.Fragment(b"[]")
_EMPTY_PAIR = _array(b"[][]")
_NO_KEYS = np.zeros(0, dtype=np.uint64)


def _encode(strings: IdStrings, ords: Sequence[int], units: Sequence[int], scale: int,
            contributions: bool, hits: bool, subqueries: Sequence[Sequence[int]] | None,
            ) -> tuple[orjson.Fragment, orjson.Fragment]:
    """The contributions' and the hits' fragments (an unasked one empty) of ``ords``."""
    assert _LISTS is not None, "compiled lists need numba"
    if not units:
        return _EMPTY, _EMPTY
    # The same division as the plain path's, written by the same orjson: the same bytes.
    written = orjson.dumps([u / scale for u in units])
    if mentions_null(written):  # orjson's word for a non-finite float, which canonical refuses
        raise ValueError("a non-finite score has no canonical encoding")
    scores = written  # read as bytes by the compiled writer, as _ranked_lists reads them
    if subqueries is not None:
        sub_offsets = np.fromiter(accumulate(map(len, subqueries), initial=0),
                                  dtype=np.int64, count=len(subqueries) + 1)
        subs = np.fromiter(chain.from_iterable(subqueries), dtype=np.int64,
                           count=int(sub_offsets[-1]))
    else:
        sub_offsets = subs = _NO_SUBS
    encoded, split = _LISTS(strings.blob, strings.offsets,
                            np.fromiter(ords, np.int64, len(ords)), scores, len(units),
                            _NO_SUBS, contributions, hits, subs, sub_offsets)
    return orjson.Fragment(encoded[:split].tobytes()), orjson.Fragment(encoded[split:].tobytes())


def contributions(strings: IdStrings, ords: Sequence[int], units: Sequence[int],
                  scale: int) -> orjson.Fragment:
    """The canonical bytes of ``[{"id": ids[o], "score": u / scale}, ...]``."""
    return _encode(strings, ords, units, scale, True, False, None)[0]


def hits(strings: IdStrings, ords: Sequence[int], units: Sequence[int], scale: int,
         subqueries: Sequence[Sequence[int]]) -> orjson.Fragment:
    """The canonical bytes of the hits ``[{"id", "rank", "score", "subqueries"}, ...]``,
    ranked from 1 in the order given; ``subqueries[i]`` the i-th's."""
    return _encode(strings, ords, units, scale, False, True, subqueries)[1]


def picked(strings: IdStrings, ords: Sequence[int], units: Sequence[int],
           scale: int) -> tuple[orjson.Fragment, orjson.Fragment]:
    """A one-part query's picks, ranked: their contributions and, the same documents, the
    hits (each from subquery 0), in one pass."""
    return _encode(strings, ords, units, scale, True, True, None)


def _scores(units: npt.NDArray[np.int64], scale: int) -> bytes:
    """The JSON array of ``units / scale``, as canonical bytes write each float.

    A quotient of integers is finite: no null to look for. numpy's int64 to float64 then an
    exact division by a power of two rounds as Python's int / int does, and orjson writes a
    numpy float as it writes a float (frozen_encoding checks both); for a few, the list is
    cheaper."""
    if len(units) <= FEW_SCORES:
        return orjson.dumps([u / scale for u in units.tolist()])
    return orjson.dumps(units / scale, option=orjson.OPT_SERIALIZE_NUMPY)


def ranked_lists(strings: IdStrings, id_units: CodeUnits, seed: int,
                 ords: npt.NDArray[np.int64], units: npt.NDArray[np.int64], k: int,
                 scale: int) -> tuple[Picks, npt.NDArray[np.uint8], int, npt.NDArray[np.uint64]]:
    """``select.top_k`` of the candidates (no exclusions; ranking stream ``seed``, the ids'
    code units ``id_units``) and ``picked`` of its picks, in one compiled call: the picks,
    both lists' bytes end to end, where the hits begin, and the tie keys hashed (for
    ``TieKeys.learn``). For a cut's candidates (about ``k`` of them): every candidate's
    score is written, picked or not."""
    assert _RANKED_LISTS is not None, "compiled lists need numba"
    if k <= 0 or len(ords) == 0:
        return ([], []), _EMPTY_PAIR, 2, _NO_KEYS
    encoded, split, picks, learned = _RANKED_LISTS(
        strings.blob, strings.offsets, ords, units, k, seed, id_units.units,
        id_units.offsets, _scores(units, scale))
    both = picks.tolist()
    n = len(both) // 2
    return (both[:n], both[n:]), encoded, split, learned


def one_part(strings: IdStrings, id_units: CodeUnits, frame: tuple[bytes, bytes], seed: str,
             query: str, decompose: bool, terms: tuple[str, ...], ords: Any, units: Any,
             k: int, scale: int) -> tuple[bytes, bytes] | None:
    """The canonical bytes of a result and of its audit, for a query that is its own one
    part (``terms`` its distinct terms) ranked from a cut's candidates (one or more, about
    ``k`` of them; ``k`` at least 1), in one compiled call (``_one_part``); ``frame``: the
    audit's bytes before the decompose flag and from after it to the query's value
    (``Retriever._audit_frame``). None where fewer than ``k`` are picked: the merge's
    backfill then decides the rest."""
    units = np.asarray(units, dtype=np.int64)
    written, audit_end, n = _ONE_PART(
        strings.blob, strings.offsets, np.asarray(ords, dtype=np.int64), units, k,
        stream_prefix(seed, query).encode("utf-16-le", "surrogatepass"), id_units.units,
        id_units.offsets, _scores(units, scale), frame[0], frame[1], orjson.dumps(query),
        orjson.dumps(seed), orjson.dumps(terms), decompose, len(terms))
    if n != k:
        return None
    return written.tobytes(), written[len(RESULT_HEAD):audit_end].tobytes()


def ranked_picked(strings: IdStrings, keys: TieKeys, ords: npt.NDArray[np.int64],
                  units: npt.NDArray[np.int64], k: int, scale: int,
                  ) -> tuple[Picks, orjson.Fragment, orjson.Fragment]:
    """``ranked_lists`` with each list as a fragment: the picks, their contributions and
    their hits."""
    assert keys.units is not None, "compiled lists hash the ids' code units"
    picks, encoded, split, learned = ranked_lists(strings, keys.units, keys.seed, ords, units,
                                                  k, scale)
    keys.learn(learned)
    return (picks, orjson.Fragment(encoded[:split].tobytes()),
            orjson.Fragment(encoded[split:].tobytes()))
