"""Seeded, reproducible samples of stored keys, optionally stratified.

The same (seed, population) always draws the same keys, so a verification run can be
repeated exactly from its recorded seed. Strata share the sample by the largest-remainder
method, in proportion to their size, so small strata (a rarely used corpus, an old month)
are still checked.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from .allocate import largest_remainder
from .rng import Mulberry32, cyrb128, mulberry32


def _stream(seed: str, label: str) -> Mulberry32:
    return mulberry32(cyrb128(f"{seed}\x00sample\x00{label}")[0])


def sample_keys(keys: Sequence[str], n: int, seed: str, label: str = "") -> list[str]:
    """``n`` keys drawn without replacement (all if fewer), in the order drawn."""
    pool = sorted(set(keys))
    stream = _stream(seed, label)
    take = min(n, len(pool))
    for i in range(take):
        j = i + stream.below(len(pool) - i)
        pool[i], pool[j] = pool[j], pool[i]
    return pool[:take]


def stratified_sample(strata: Mapping[str, Sequence[str]], n: int, seed: str) -> list[str]:
    """``n`` keys shared among strata by size (largest remainder), each stratum seeded apart."""
    names = sorted(name for name, keys in strata.items() if keys)
    if not names:
        return []
    sizes = [len(set(strata[name])) for name in names]
    quotas = largest_remainder(min(n, sum(sizes)), sizes, _stream(seed, "strata"))
    drawn: list[str] = []
    for name, quota in zip(names, quotas, strict=True):
        # quota <= size: a largest-remainder share of at most the total never exceeds it.
        drawn.extend(sample_keys(strata[name], quota, seed, name))
    return drawn
