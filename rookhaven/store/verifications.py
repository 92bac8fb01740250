"""Verification runs, the alerts stream and the counters the verifier keeps.

A run's record and its alerts and counter increments are written in one MULTI, so the
counters always agree with the recorded runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..core.canonical import canonical_bytes
from ..errors import NotFoundError
from .connection import translated
from .context import StoreContext, text

if TYPE_CHECKING:  # the verification package imports the store, not the reverse at run time
    from ..verification.models import VerificationRun

ALERTS_MAXLEN = 1_000_000


class VerificationLog:
    """Records of verification runs, and the alarms they raised."""

    def __init__(self, ctx: StoreContext) -> None:
        self._ctx = ctx

    def record(self, run: VerificationRun) -> None:
        """Store ``run``, append its alarms to the alerts stream, and count it."""
        k = self._ctx.keys
        with translated(self._ctx.client, f"recording verification {run.run_id}"):
            pipe = self._ctx.client.pipeline(transaction=True)
            pipe.set(k.verification(run.run_id), canonical_bytes(run))
            pipe.zadd(k.verifications, {run.run_id: run.started})
            for verdict in run.verdicts:
                if verdict.alarm:
                    pipe.xadd(k.alerts, {"run": run.run_id, "key": verdict.key,
                                         "outcome": verdict.outcome, "where": verdict.where or "",
                                         "detail": verdict.detail[:500]},
                              maxlen=ALERTS_MAXLEN, approximate=True)
            for name, value in (("verify_runs", 1), ("verify_checked", run.checked),
                                ("verify_matched", run.matched), ("verify_alarms", run.alarms),
                                ("verify_drift", run.drift)):
                pipe.hincrby(k.counters, name, value)
            pipe.execute()

    def get(self, run_id: str) -> bytes:
        """The canonical record of run ``run_id``, or NotFoundError."""
        with translated(self._ctx.client, f"reading verification {run_id}"):
            value = self._ctx.client.get(self._ctx.keys.verification(run_id))
        if value is None:
            raise NotFoundError(f"no verification run {run_id!r}; list runs with "
                                "`rookhaven verify --history`")
        return bytes(value)

    def latest(self, count: int = 10) -> list[str]:
        """The ids of the ``count`` most recent runs, newest first."""
        with translated(self._ctx.client, "listing verification runs"):
            return [text(r) for r in self._ctx.client.zrevrange(self._ctx.keys.verifications,
                                                                 0, count - 1)]

    def alerts(self, count: int = 100) -> list[dict[str, Any]]:
        """The ``count`` most recent alarms, newest first."""
        with translated(self._ctx.client, "reading alerts"):
            rows = self._ctx.client.xrevrange(self._ctx.keys.alerts, count=count)
        return [{"id": text(i), **{text(a): text(b) for a, b in f.items()}} for i, f in rows]

    def counters(self) -> dict[str, int]:
        """Every counter by name, summed over the store's counters hashes (the shards' and
        the one outside them; a flat store has one)."""
        keys = self._ctx.keys
        names = list(dict.fromkeys([keys.counters, *(s.counters for s in keys.shards)]))
        totals: dict[str, int] = {}
        with translated(self._ctx.client, "reading counters"):
            pipe = self._ctx.client.pipeline(transaction=False)
            for name in names:
                pipe.hgetall(name)
            for raw in pipe.execute():
                for a, b in raw.items():
                    totals[text(a)] = totals.get(text(a), 0) + int(text(b))
        return dict(sorted(totals.items()))
