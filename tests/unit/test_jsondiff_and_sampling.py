"""First-difference paths for mismatches, and seeded reproducible samples."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from rookhaven.core.jsondiff import first_difference, hits_first
from rookhaven.core.sampling import sample_keys, stratified_sample


def test_equal_documents_have_no_difference() -> None:
    assert first_difference({"a": [1, {"b": 2}]}, {"a": [1, {"b": 2}]}) is None


def test_the_path_names_the_hit_and_the_field() -> None:
    stored = {"hits": [{"id": "d1", "score": 0.5}, {"id": "d2", "score": 0.25}], "audit": {}}
    replayed = {"hits": [{"id": "d1", "score": 0.5}, {"id": "d2", "score": 0.5}], "audit": {}}
    assert hits_first(stored, replayed) == "hits[1].score"


def test_missing_keys_lengths_and_types_are_differences() -> None:
    assert first_difference({"a": 1}, {"b": 1}) == "a"
    assert first_difference([1, 2], [1]) == "[1]"
    assert first_difference({"a": 1}, {"a": "1"}) == "a"


def test_hits_are_reported_before_the_audit() -> None:
    assert hits_first({"audit": {"x": 1}, "hits": [1]}, {"audit": {"x": 2}, "hits": [2]}) == \
        "hits[0]"


KEYS = [f"k{i:03d}" for i in range(200)]


def test_a_sample_is_reproducible_from_its_seed_and_varies_with_it() -> None:
    assert sample_keys(KEYS, 10, "night-1") == sample_keys(list(reversed(KEYS)), 10, "night-1")
    assert sample_keys(KEYS, 10, "night-1") != sample_keys(KEYS, 10, "night-2")


@given(st.integers(0, 250), st.text(max_size=8))
def test_a_sample_draws_distinct_keys_from_the_population(n: int, seed: str) -> None:
    drawn = sample_keys(KEYS, n, seed)
    assert len(drawn) == min(n, len(KEYS)) == len(set(drawn))
    assert set(drawn) <= set(KEYS)


def test_stratified_sampling_reaches_small_strata_in_proportion() -> None:
    strata = {"big": KEYS[:180], "small": KEYS[180:], "empty": []}
    drawn = stratified_sample(strata, 20, "s")
    assert len(drawn) == 20
    assert sum(k in strata["small"] for k in drawn) == 2
    assert stratified_sample(strata, 500, "s") and len(stratified_sample(strata, 500, "s")) == 200
