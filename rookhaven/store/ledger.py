"""The job ledger (every state change), the integrity-violations stream and the stream of
rejected broker messages."""

from __future__ import annotations

import heapq
from collections.abc import Iterator

from .connection import translated
from .context import StoreContext, text
from .records import LedgerEvent, Violation


class Ledger:
    """The append-only history of jobs, read in pages."""

    def __init__(self, ctx: StoreContext) -> None:
        self._ctx = ctx

    def _read(self, stream: str, page: int) -> Iterator[tuple[str, dict[str, str]]]:
        start = "-"
        while True:
            with translated(self._ctx.client, f"reading {stream}"):
                rows = self._ctx.client.xrange(stream, start, "+", count=page)
            for entry_id, fields in rows:
                yield text(entry_id), {text(k): text(v) for k, v in fields.items()}
            if len(rows) < page:
                return
            start = "(" + text(rows[-1][0])

    def _merged(self, streams: list[str], page: int) -> Iterator[tuple[str, dict[str, str]]]:
        """Entries of the shards' ``streams``, merged by entry id (time, then sequence)."""
        reads = [self._read(stream, page) for stream in streams]
        if len(reads) == 1:
            return reads[0]
        return heapq.merge(*reads, key=lambda row: tuple(int(n) for n in row[0].split("-")))

    def events(self, page: int = 1000) -> Iterator[LedgerEvent]:
        """Every job event, oldest first (each shard keeps its own ledger). An entry names
        the jobs one script moved alike (``jobs``, separated by spaces; ``job`` in entries
        written by earlier releases): each is an event of its own, in the order named."""
        for entry_id, f in self._merged([s.ledger for s in self._ctx.keys.shards], page):
            for job in (f["jobs"].split(" ") if "jobs" in f else [f["job"]]):
                yield LedgerEvent(id=entry_id, job=job, event=f["event"], at=float(f["at"]),
                                  detail=f.get("detail", ""))

    def reject(self, task: str, reason: str, at: str) -> None:
        """Record a broker message that was dropped unexecuted, and why."""
        with translated(self._ctx.client, "recording a rejected message"):
            self._ctx.client.xadd(self._ctx.keys.rejected,
                                  {"task": task, "reason": reason[:500], "at": at},
                                  maxlen=100_000, approximate=True)
            self._ctx.client.hincrby(self._ctx.keys.counters, "messages_rejected", 1)

    def rejected(self, page: int = 1000) -> Iterator[dict[str, str]]:
        """Every recorded rejected message, oldest first."""
        for _, fields in self._read(self._ctx.keys.rejected, page):
            yield fields

    def violations(self, page: int = 1000) -> Iterator[Violation]:
        """Every refused attempt to store different bytes under an existing key."""
        for entry_id, f in self._merged([s.violations for s in self._ctx.keys.shards], page):
            yield Violation(id=entry_id, key=f["key"], job=f["job"], what=f["what"],
                            at=float(f["at"]))
