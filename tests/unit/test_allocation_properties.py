"""Largest-remainder allocation: properties that must hold for every input."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from rookhaven.core.allocate import largest_remainder, seeded_permutation
from rookhaven.core.rng import mulberry32

weights_st = st.lists(st.integers(min_value=1, max_value=12), min_size=1, max_size=12)
total_st = st.integers(min_value=0, max_value=2000)
seed_st = st.integers(min_value=0, max_value=2**32 - 1)


@given(total_st, weights_st, seed_st)
def test_seats_sum_to_the_total_even_when_it_is_smaller_than_the_number_of_subqueries(
        total: int, weights: list[int], seed: int) -> None:
    assert sum(largest_remainder(total, weights, mulberry32(seed))) == total


@given(total_st, weights_st, seed_st)
def test_no_subquery_gets_less_than_its_floor_share_nor_more_than_one_above_it(
        total: int, weights: list[int], seed: int) -> None:
    seats = largest_remainder(total, weights, mulberry32(seed))
    for seat, weight in zip(seats, weights, strict=True):
        floor = total * weight // sum(weights)
        assert floor <= seat <= floor + 1


@given(total_st, weights_st, seed_st)
def test_a_larger_remainder_never_loses_a_seat_to_a_smaller_one(
        total: int, weights: list[int], seed: int) -> None:
    seats = largest_remainder(total, weights, mulberry32(seed))
    w_sum = sum(weights)
    for i, wi in enumerate(weights):
        for j, wj in enumerate(weights):
            gained_i = seats[i] - total * wi // w_sum
            gained_j = seats[j] - total * wj // w_sum
            if total * wi % w_sum > total * wj % w_sum:
                assert gained_i >= gained_j


@given(total_st, weights_st, seed_st)
def test_allocation_is_a_pure_function_of_its_inputs(
        total: int, weights: list[int], seed: int) -> None:
    assert (largest_remainder(total, weights, mulberry32(seed))
            == largest_remainder(total, weights, mulberry32(seed)))


@given(st.integers(min_value=0, max_value=40), seed_st)
def test_seeded_permutation_is_a_permutation(n: int, seed: int) -> None:
    assert sorted(seeded_permutation(n, mulberry32(seed))) == list(range(n))


def test_equal_remainders_are_broken_by_the_seed_not_by_position() -> None:
    winners = {largest_remainder(1, [1, 1, 1], mulberry32(seed)).index(1) for seed in range(60)}
    assert winners == {0, 1, 2}
