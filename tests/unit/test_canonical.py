"""The canonical encoding: sorted keys, no whitespace, and no non-finite float ever written."""

from __future__ import annotations

import math

import pytest

from rookhaven import canonical_bytes


def test_keys_are_sorted_and_there_is_no_whitespace() -> None:
    assert canonical_bytes({"b": [1, 2.5], "a": {"d": None, "c": "x y"}}) == (
        b'{"a":{"c":"x y","d":null},"b":[1,2.5]}')


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
@pytest.mark.parametrize("shape", ["top", "nested", "beside-a-null", "beside-null-text"])
def test_a_non_finite_float_is_refused_wherever_it_is(bad: float, shape: str) -> None:
    value = {"top": bad, "nested": {"hits": [{"score": bad}]},
             "beside-a-null": {"x": None, "score": [1.0, bad]},
             "beside-null-text": {"id": "nullable", "score": bad}}[shape]
    with pytest.raises(ValueError, match="non-finite"):
        canonical_bytes(value)


def test_nulls_and_the_word_null_alone_are_fine() -> None:
    assert canonical_bytes({"id": "null", "meta": None, "s": 0.25}) == (
        b'{"id":"null","meta":null,"s":0.25}')
