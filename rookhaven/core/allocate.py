"""Share a recall budget among weighted subqueries by the largest-remainder (Hamilton) method.

All arithmetic is on integers: quota_i = total * w_i / W is split into its floor and an
exact integer remainder, so no float can decide a seat. Equal remainders are ordered by
a seeded permutation drawn from the allocation stream.
"""

from __future__ import annotations

from collections.abc import Sequence

from .rng import Mulberry32


def seeded_permutation(n: int, stream: Mulberry32) -> list[int]:
    """A Fisher-Yates shuffle of ``range(n)`` driven by ``stream``."""
    order = list(range(n))
    for i in range(n - 1, 0, -1):
        j = stream.below(i + 1)
        order[i], order[j] = order[j], order[i]
    return order


def largest_remainder(total: int, weights: Sequence[int], stream: Mulberry32) -> list[int]:
    """Seats for each weight, summing to ``total``; each gets at least the floor of its quota.

    When ``total`` is smaller than the number of weights, some get zero seats: the floors are
    all zero and the seats go to the largest remainders, ties by the seeded order.
    """
    if total < 0:
        raise ValueError(f"total must be >= 0, got {total}")
    if not weights:
        return []
    if any(w <= 0 for w in weights):
        raise ValueError(f"weights must be positive, got {list(weights)}")
    if len(weights) == 1:  # the usual one-part query; a one-item shuffle draws nothing
        return [total]
    weight_sum = sum(weights)
    seats = [total * w // weight_sum for w in weights]
    remainders = [total * w % weight_sum for w in weights]
    leftover = total - sum(seats)
    position = {index: rank for rank, index in enumerate(seeded_permutation(len(weights), stream))}
    by_claim = sorted(range(len(weights)), key=lambda i: (-remainders[i], position[i]))
    for i in by_claim[:leftover]:
        seats[i] += 1
    return seats
