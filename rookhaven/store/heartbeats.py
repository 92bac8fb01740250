"""Worker liveness: a key with a time-to-live that a live worker keeps refreshing.

The sweeper re-enqueues a running job at once when its worker's key has expired, instead
of waiting for the broker's visibility timeout (long, because it must outlast any task).
"""

from __future__ import annotations

from .connection import translated
from .context import StoreContext


class Heartbeats:
    """Which worker instances are alive."""

    def __init__(self, ctx: StoreContext) -> None:
        self._ctx = ctx

    def beat(self, instance: str, ttl: float) -> None:
        """Say ``instance`` is alive for the next ``ttl`` seconds."""
        with translated(self._ctx.client, "refreshing a worker heartbeat"):
            self._ctx.client.set(self._ctx.keys.worker(instance), self._ctx.now(),
                                 px=max(1, int(ttl * 1000)))

    def stop(self, instance: str) -> None:
        """Say ``instance`` has stopped (a clean shutdown)."""
        with translated(self._ctx.client, "clearing a worker heartbeat"):
            self._ctx.client.delete(self._ctx.keys.worker(instance))

    def any_alive(self) -> bool:
        """Whether any worker's heartbeat has not expired."""
        with translated(self._ctx.client, "looking for live workers"):
            found = self._ctx.client.scan_iter(match=self._ctx.keys.worker("*"), count=100)
            return next(iter(found), None) is not None

    def alive(self, instances: set[str]) -> set[str]:
        """The members of ``instances`` whose heartbeat has not expired."""
        names = sorted(instances)
        if not names:
            return set()
        with translated(self._ctx.client, "reading worker heartbeats"):
            pipe = self._ctx.client.pipeline(transaction=False)
            for name in names:
                pipe.exists(self._ctx.keys.worker(name))
            flags = pipe.execute()
        return {name for name, flag in zip(names, flags, strict=True) if flag}
