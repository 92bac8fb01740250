"""Seeded streams and tie keys, each derived from (seed, query) with its own label.

Domain separation by label means the allocation and ranking streams are hashes of
different strings, so neither can echo the other. The tie key depends only on the ranking
stream and the document id: adding an unrelated document never reorders existing ties.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from .rng import Labels, cyrb128, cyrb128_labelled, cyrb128_many


class Streams(NamedTuple):
    """The uint32 seeds of the two random streams a retrieval uses (a named tuple: made for
    every request)."""

    allocation: int
    ranking: int

    def as_dict(self) -> dict[str, int]:
        return {"allocation": self.allocation, "ranking": self.ranking}


# Each stream's seed is the first word of cyrb128(seed NUL query NUL label).
STREAM_LABELS = Labels("\x00allocation", "\x00ranking")


def stream_prefix(seed: str, query: str) -> str:
    """What every stream's label is hashed after (``STREAM_LABELS``)."""
    return f"{seed}\x00{query}"


def derive_streams(seed: str, query: str) -> Streams:
    """The allocation and ranking stream seeds for a request."""
    rows = cyrb128_labelled(stream_prefix(seed, query), STREAM_LABELS).tolist()
    return Streams(rows[0][0], rows[1][0])


def tie_key(ranking_seed: int, doc_id: str) -> int:
    """A 64-bit key that orders equally-scored documents; a pure function of its two inputs."""
    h = cyrb128(f"{ranking_seed:08x}\x00{doc_id}")
    return (h[0] << 32) | h[1]


def tie_keys(ranking_seed: int, doc_ids: Sequence[str]) -> list[int]:
    """``[tie_key(ranking_seed, d) for d in doc_ids]``, hashed in one batch."""
    h = cyrb128_many(f"{ranking_seed:08x}\x00", doc_ids)
    return ((h[:, 0] << np.uint64(32)) | h[:, 1]).tolist()  # type: ignore[no-any-return]
