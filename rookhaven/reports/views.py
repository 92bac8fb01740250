"""What a report page shows, as plain data: a re-ranking run with its movers' two rankings,
or a verification run; gathered from the store by ``sources``, drawn by ``pages``."""

from __future__ import annotations

from dataclasses import dataclass

from ..rerank.models import RerankRow, RerankSpec
from ..verification.models import VerificationRun

# The queries a page shows side by side: those that moved most. The pictures count every
# query, so a run of any size makes a page of the same size.
MOVERS = 10
# "A lot": a ranking whose top k keeps less than this share of the old one's documents.
A_LOT = 0.8


@dataclass(frozen=True)
class Hit:
    """A ranked document: its id and, where the corpus gives one, its title."""

    id: str
    title: str


@dataclass(frozen=True)
class Mover:
    """One query that moved, with both rankings (top k of each)."""

    row: RerankRow
    old: tuple[Hit, ...]
    new: tuple[Hit, ...]


@dataclass(frozen=True)
class Made:
    """Who made the page, and when (UTC, ISO 8601): a page read years later says so."""

    version: str
    at: str


@dataclass(frozen=True)
class RerankView:
    run_id: str
    spec: RerankSpec
    total: int
    rows: tuple[RerankRow, ...]  # the queries compared so far, in query order
    movers: tuple[Mover, ...]
    made: Made
    names: dict[str, str]  # corpus digest -> name@version, where the registry has one
    askers: tuple[str, ...] = ()  # the MCP tokens that started it (none: the CLI did)

    def corpus(self, digest: str | None) -> str:
        """A corpus as a reader knows it: its name and version, and its digest."""
        if digest is None:
            return "-"
        name = self.names.get(digest)
        return f"{name} ({digest})" if name else digest

    @property
    def finished(self) -> bool:
        return len(self.rows) >= self.total


@dataclass(frozen=True)
class VerificationView:
    run: VerificationRun
    made: Made


def degree(row: RerankRow) -> str:
    """How much a query's ranking changed: 'failed', 'not at all', 'a little' or 'a lot'."""
    change = row.change
    if change is None:
        return "failed"
    if change["unchanged"]:
        return "not at all"
    return "a lot" if change["overlap_at_k"] < A_LOT else "a little"


def movers(rows: tuple[RerankRow, ...] | list[RerankRow], count: int = MOVERS,
           ) -> list[RerankRow]:
    """The ``count`` rows that moved most: lowest rank-biased overlap, then lowest overlap,
    then the largest displacement, then query order (a stable choice)."""
    moved = [r for r in rows if r.change is not None and not r.change["unchanged"]]
    moved.sort(key=lambda r: (r.change["rbo"], r.change["overlap_at_k"],  # type: ignore[index]
                              -r.change["max_displacement"], r.index))  # type: ignore[index]
    return moved[:count]
