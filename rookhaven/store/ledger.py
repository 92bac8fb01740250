"""Reading the job ledger (every state change) and the integrity-violations stream."""

from __future__ import annotations

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

    def events(self, page: int = 1000) -> Iterator[LedgerEvent]:
        """Every job event, oldest first."""
        for entry_id, f in self._read(self._ctx.keys.ledger, page):
            yield LedgerEvent(id=entry_id, job=f["job"], event=f["event"], at=float(f["at"]),
                              detail=f.get("detail", ""))

    def violations(self, page: int = 1000) -> Iterator[Violation]:
        """Every refused attempt to store different bytes under an existing key."""
        for entry_id, f in self._read(self._ctx.keys.violations, page):
            yield Violation(id=entry_id, key=f["key"], job=f["job"], what=f["what"],
                            at=float(f["at"]))
