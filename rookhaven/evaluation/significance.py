"""Paired significance tests of per-query metric values, from scipy (the ``eval`` extra).

scipy is not a core dependency (a retrieval worker never needs it): ``rookhaven eval`` with
two or more engines imports it here and says how to install it when it is missing.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ..errors import ConfigError

TESTS = ("t-test", "permutation")
PERMUTATIONS = 10_000
PERMUTATION_SEED = 20261201  # fixed, so a report's p-values repeat exactly


def _scipy_stats() -> Any:
    try:
        from scipy import stats
    except ImportError:
        raise ConfigError("comparing engines needs scipy: pip install 'rookhaven[eval]'"
                          ) from None
    return stats


def paired_p(a: Sequence[float], b: Sequence[float], test: str = "t-test") -> float:
    """Two-sided p-value that ``a`` and ``b`` (paired by query) have the same mean.

    ``t-test`` is scipy's ``ttest_rel``; ``permutation`` is ``permutation_test`` with
    ``permutation_type="samples"`` (signs of the differences flipped), 10,000 resamples and
    a fixed seed. No differences at all give p = 1.
    """
    if test not in TESTS:
        raise ConfigError(f"unknown test {test!r}; choose one of: {', '.join(TESTS)}")
    if len(a) != len(b):
        raise ValueError("paired samples must have the same length")
    if len(a) < 2 or all(x == y for x, y in zip(a, b, strict=True)):
        return 1.0
    stats = _scipy_stats()
    if test == "t-test":
        p = float(stats.ttest_rel(a, b).pvalue)
    else:
        def mean_difference(x: Any, y: Any, axis: int) -> Any:
            return (x - y).mean(axis=axis)
        p = float(stats.permutation_test((list(a), list(b)), mean_difference, vectorized=True,
                                         permutation_type="samples", n_resamples=PERMUTATIONS,
                                         random_state=PERMUTATION_SEED).pvalue)
    return 1.0 if math.isnan(p) else p
