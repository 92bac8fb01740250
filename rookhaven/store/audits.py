"""The index of stored audits, by time and by corpus, scanned in pages (never with KEYS).

The verifier samples it and bulk re-ranking filters it; both read keys here and the bytes
from store.results.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator

from .connection import translated
from .context import StoreContext, text


class AuditIndex:
    """Result keys of stored audits, ordered by when each was first stored."""

    def __init__(self, ctx: StoreContext) -> None:
        self._ctx = ctx

    def _indexes(self, corpus: str | None) -> list[str]:
        return [shard.audits_by_time if corpus is None else shard.audits_by_corpus(corpus)
                for shard in self._ctx.keys.shards]

    def count(self, *, corpus: str | None = None, since: float | None = None,
              until: float | None = None) -> int:
        """How many audits were stored in [since, until], optionally over one corpus."""
        low = "-inf" if since is None else since
        high = "+inf" if until is None else until
        with translated(self._ctx.client, "counting stored audits"):
            pipe = self._ctx.client.pipeline(transaction=False)
            for index in self._indexes(corpus):
                pipe.zcount(index, low, high)
            return sum(int(n) for n in pipe.execute())

    def scan(self, *, corpus: str | None = None, since: float | None = None,
             until: float | None = None, page: int = 1000) -> Iterator[tuple[str, float]]:
        """(result key, stored time) oldest first, in pages of ``page``; the shards' indexes
        merged by time (ties by key, as one index orders them)."""
        scans = [self._scan(index, since, until, page) for index in self._indexes(corpus)]
        if len(scans) == 1:
            return scans[0]
        return heapq.merge(*scans, key=lambda row: (row[1], row[0]))

    def _scan(self, index: str, since: float | None, until: float | None,
              page: int) -> Iterator[tuple[str, float]]:
        low: float | str = "-inf" if since is None else since
        high: float | str = "+inf" if until is None else until
        while True:
            with translated(self._ctx.client, "scanning stored audits"):
                rows = self._ctx.client.zrangebyscore(index, low, high, start=0, num=page,
                                                      withscores=True)
            for member, score in rows:
                yield text(member), float(score)
            if len(rows) < page:
                return
            # Resume strictly after the last score, then re-read members sharing it.
            last = float(rows[-1][1])
            tied = {text(m) for m, s in rows if float(s) == last}
            with translated(self._ctx.client, "scanning stored audits"):
                same = self._ctx.client.zrangebyscore(index, last, last)
            for member in same:
                if text(member) not in tied:
                    yield text(member), last
            low = f"({last!r}"

    def newest(self, *, corpus: str | None = None) -> float | None:
        """When the most recently stored audit (of ``corpus``) was stored; None if none."""
        with translated(self._ctx.client, "reading the newest stored audit"):
            pipe = self._ctx.client.pipeline(transaction=False)
            for index in self._indexes(corpus):
                pipe.zrevrange(index, 0, 0, withscores=True)
            found = [float(rows[0][1]) for rows in pipe.execute() if rows]
        return max(found, default=None)

    def stored_at(self, key: str) -> float | None:
        """When the audit under ``key`` was first stored, or None."""
        with translated(self._ctx.client, f"looking up audit {key}"):
            score = self._ctx.client.zscore(self._ctx.shard(key).audits_by_time, key)
        return None if score is None else float(score)
