"""Top-k selection and ranking: the one total order (score, seeded tie key, ordinal)."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from rookhaven.core.rng import CodeUnits, cyrb128
from rookhaven.core.select import NUMPY_FROM, RANK_NUMPY_FROM, TieKeys, ranked, top_k
from rookhaven.core.streams import derive_streams, tie_key, tie_keys

# Some ids of two-byte and of astral characters (two UTF-16 code units each).
IDS = tuple(f"doc-{i:05d}" + ("\U0001f6a2" if i % 7 == 0 else "\u00e9" if i % 5 == 0 else "")
            for i in range(2000))
UNITS = CodeUnits(IDS)  # for the compiled ranking, which hashes the ids it needs itself


def _reference_top_k(ords: list[int], units: list[int], k: int, seed: int,
                     exclude: frozenset[int]) -> list[tuple[int, int]]:
    """Sort every positive, not excluded pair by the full key; keep the first k."""
    pairs = [(o, u) for o, u in zip(ords, units, strict=True) if u > 0 and o not in exclude]
    pairs.sort(key=lambda p: (-p[1], tie_key(seed, IDS[p[0]]), p[0]))
    return pairs[:k] if k > 0 else []


# Small candidate lists, lists long enough for numpy's ranking, and for the numpy cut; few
# distinct scores (ties everywhere), some at the top of the int64 range.
_candidates = st.tuples(st.one_of(st.integers(0, 40),
                                  st.integers(RANK_NUMPY_FROM - 2, RANK_NUMPY_FROM + 80),
                                  st.integers(NUMPY_FROM, NUMPY_FROM + 40)),
                        st.randoms(use_true_random=False)).map(lambda nr: (
                            nr[1].sample(range(len(IDS)), nr[0]),
                            [nr[1].choice([*range(-1, 7), 2**63 - 1]) for _ in range(nr[0])]))


@given(_candidates, st.integers(-1, 150), st.integers(0, 2**32 - 1),
       st.one_of(st.just(frozenset()), st.frozensets(st.integers(0, 60))), st.booleans())
def test_top_k_picks_what_sorting_every_candidate_by_the_full_key_picks(
        candidates: tuple[list[int], list[int]], k: int, seed: int,
        exclude: frozenset[int], compiled: bool) -> None:
    ords, units = candidates
    keys = TieKeys(seed, IDS, UNITS if compiled else None)
    got = top_k(np.asarray(ords, dtype=np.int64), np.asarray(units, dtype=np.int64), k,
                keys, exclude)
    assert list(zip(*got, strict=True)) == _reference_top_k(ords, units, k, seed, exclude)
    # Whatever hashed them, the keys remembered are the tie keys.
    known = keys.of([])
    assert all(known[o] == tie_key(seed, IDS[o]) for o in known)


@given(st.dictionaries(st.integers(0, len(IDS) - 1),
                       st.one_of(st.integers(0, 5), st.sampled_from([2**63 - 1, 2**63 - 2]))),
       st.integers(0, 2**32 - 1))
def test_ranked_orders_by_score_then_tie_key_then_ordinal(scores: dict[int, int],
                                                           seed: int) -> None:
    keys = TieKeys(seed, IDS)
    keys.of(list(scores)[:3])  # keys already known for some documents change nothing
    expected = sorted(scores.items(), key=lambda p: (-p[1], tie_key(seed, IDS[p[0]]), p[0]))
    got = ranked(list(scores), list(scores.values()), keys)
    assert list(zip(*got, strict=True)) == expected


def test_tie_keys_in_a_batch_equal_one_at_a_time() -> None:
    seed = derive_streams("s", "q").ranking
    ids = [*IDS[:50], "é", "🚢"]
    assert tie_keys(seed, ids) == [tie_key(seed, d) for d in ids]
    assert tie_keys(seed, []) == []


def test_stream_seeds_are_the_first_word_of_the_labelled_hashes() -> None:
    streams = derive_streams("run-1", "crane faults")
    assert streams.allocation == cyrb128("run-1\x00crane faults\x00allocation")[0]
    assert streams.ranking == cyrb128("run-1\x00crane faults\x00ranking")[0]
