"""Ranking comparison: overlap, gains and losses, displacement, Kendall's tau, RBO."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rookhaven.core.compare import compare_rankings, kendall_tau, rank_biased_overlap


def test_identical_rankings_are_unchanged_with_perfect_agreement() -> None:
    change = compare_rankings(["a", "b", "c"], ["a", "b", "c"], 3)
    assert change.unchanged
    assert (change.overlap, change.kendall_tau, change.rbo) == (3, 1.0, pytest.approx(1.0))


def test_gains_losses_and_displacements_are_listed_in_rank_order() -> None:
    change = compare_rankings(["a", "b", "c", "d"], ["c", "a", "e", "f"], 4)
    assert change.gained == ("e", "f")
    assert change.lost == ("b", "d")
    assert change.displacement == {"a": 1, "c": -2}
    assert change.overlap_at_k == 0.5
    assert not change.unchanged


def test_overlap_is_a_share_of_the_depth_compared_not_of_a_k_neither_list_reaches() -> None:
    same = compare_rankings(["a", "b", "c"], ["a", "b", "c"], 10)
    assert (same.depth, same.overlap_at_k, same.unchanged) == (3, 1.0, True)
    shorter = compare_rankings(["a", "b", "c"], ["a"], 10)
    assert (shorter.depth, shorter.overlap_at_k) == (3, pytest.approx(1 / 3))
    assert compare_rankings([], [], 10).overlap_at_k == 1.0
    assert compare_rankings(list("abcdefghijkl"), list("abcdefghijkl"), 10).depth == 10


def test_reversed_rankings_have_tau_minus_one() -> None:
    assert kendall_tau(["a", "b", "c", "d"], ["d", "c", "b", "a"]) == -1.0
    assert kendall_tau(["a"], ["a"]) is None


@given(st.permutations(list("abcdefgh")))
def test_kendall_tau_matches_the_quadratic_definition(order: list[str]) -> None:
    base = list("abcdefgh")
    pos = {d: i for i, d in enumerate(order)}
    pairs = list(itertools.combinations(base, 2))
    concordant = sum(pos[x] < pos[y] for x, y in pairs)
    expected = (2 * concordant - len(pairs)) / len(pairs)
    assert kendall_tau(base, order) == pytest.approx(expected)


def test_rbo_of_disjoint_rankings_is_zero_and_of_equal_ones_is_one() -> None:
    assert rank_biased_overlap(["a", "b"], ["c", "d"]) == 0.0
    assert rank_biased_overlap(list("abcdef"), list("abcdef")) == pytest.approx(1.0)


def test_rbo_weighs_the_top_more_than_the_bottom() -> None:
    top_swap = rank_biased_overlap(list("abcdef"), list("bacdef"))
    bottom_swap = rank_biased_overlap(list("abcdef"), list("abcdfe"))
    assert top_swap < bottom_swap < 1.0


def test_only_the_top_k_is_compared() -> None:
    assert compare_rankings(["a", "b", "x"], ["a", "b", "y"], 2).unchanged
