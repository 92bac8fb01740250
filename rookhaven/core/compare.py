"""What changed between two rankings of the same query: overlap, gains, losses, displacement,
Kendall's tau and rank-biased overlap.

Counts are exact integers; each float is one final division (or an RBO sum in a fixed
order), so a report is reproducible too.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class RankingChange:
    """The difference between an old and a new ranking, cut at depth k."""

    k: int
    overlap: int
    gained: tuple[str, ...]
    lost: tuple[str, ...]
    displacement: dict[str, int]
    kendall_tau: float | None
    rbo: float

    @property
    def depth(self) -> int:
        """How deep the two rankings were compared: the longer of the two, at most k."""
        return self.overlap + max(len(self.lost), len(self.gained))

    @property
    def overlap_at_k(self) -> float:
        """The share of the compared depth both rankings hold: two identical lists shorter
        than k (a query few documents match) overlap fully, not by their share of k."""
        return self.overlap / self.depth if self.depth else 1.0

    @property
    def unchanged(self) -> bool:
        return not self.gained and not self.lost and not any(self.displacement.values())

    def as_dict(self) -> dict[str, object]:
        return {"k": self.k, "depth": self.depth, "overlap": self.overlap,
                "overlap_at_k": self.overlap_at_k,
                "gained": list(self.gained), "lost": list(self.lost),
                "displacement": dict(sorted(self.displacement.items())),
                "max_displacement": max(map(abs, self.displacement.values()), default=0),
                "kendall_tau": self.kendall_tau, "rbo": self.rbo, "unchanged": self.unchanged}


def _inversions(values: list[int]) -> int:
    """Pairs i < j with values[i] > values[j], by merge sort in O(n log n)."""
    if len(values) < 2:
        return 0
    middle = len(values) // 2
    left, right = values[:middle], values[middle:]
    count = _inversions(left) + _inversions(right)
    merged_left, merged_right = sorted(left), sorted(right)
    j = 0
    for value in merged_left:
        while j < len(merged_right) and merged_right[j] < value:
            j += 1
        count += j
    return count


def kendall_tau(old: Sequence[str], new: Sequence[str]) -> float | None:
    """Kendall's tau over the documents both rankings contain; None with fewer than two."""
    position = {doc: i for i, doc in enumerate(new)}
    common = [position[doc] for doc in old if doc in position]
    n = len(common)
    if n < 2:
        return None
    pairs = n * (n - 1) // 2
    discordant = _inversions(common)
    return (pairs - 2 * discordant) / pairs


def rank_biased_overlap(old: Sequence[str], new: Sequence[str], p: float = 0.9) -> float:
    """Extrapolated RBO (Webber, Moffat and Zobel 2010) of two rankings cut at depth k.

    RBO_ext = X_k / k * p**k + (1 - p) / p * sum_{d=1..k} X_d / d * p**d, where X_d is the
    overlap of the two prefixes of length d. A shorter list is read as if padded with
    entries that match nothing.
    """
    depth = max(len(old), len(new))
    if depth == 0:
        return 1.0
    seen_old: set[str] = set()
    seen_new: set[str] = set()
    overlap = 0
    total = 0.0
    weight = 1.0
    for d in range(1, depth + 1):
        a = old[d - 1] if d <= len(old) else None
        b = new[d - 1] if d <= len(new) else None
        if a is not None and a == b:
            overlap += 1
        else:
            overlap += (a is not None and a in seen_new) + (b is not None and b in seen_old)
        if a is not None:
            seen_old.add(a)
        if b is not None:
            seen_new.add(b)
        weight *= p
        total += overlap / d * weight
    return overlap / depth * weight + (1 - p) / p * total


def compare_rankings(old: Sequence[str], new: Sequence[str], k: int) -> RankingChange:
    """Compare the top ``k`` of two rankings (lists of document ids, best first)."""
    old_k, new_k = list(old[:k]), list(new[:k])
    old_set, new_set = set(old_k), set(new_k)
    new_rank = {doc: i for i, doc in enumerate(new_k)}
    return RankingChange(
        k=k,
        overlap=len(old_set & new_set),
        gained=tuple(doc for doc in new_k if doc not in old_set),
        lost=tuple(doc for doc in old_k if doc not in new_set),
        displacement={doc: new_rank[doc] - i for i, doc in enumerate(old_k) if doc in new_rank},
        kendall_tau=kendall_tau(old_k, new_k),
        rbo=rank_biased_overlap(old_k, new_k),
    )
