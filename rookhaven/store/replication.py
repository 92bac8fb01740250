"""Replication: proof, from Redis WAIT, that replicas hold what this process wrote.

Redis replicates asynchronously, so a write the primary accepted can vanish in a failover.
WAIT blocks until that many replicas acknowledged the calling connection's last write; the
probe write before it makes that "every write so far", whichever pooled connection made
them, because a replica applies the primary's writes in order. See docs/adr/0017-sentinel.md.
"""

from __future__ import annotations

from ..errors import ReplicationError
from .connection import describe, translated
from .context import StoreContext


class Replication:
    """Confirms writes reached ``min_replicas`` replicas (0: confirms nothing, costs nothing)."""

    def __init__(self, ctx: StoreContext, min_replicas: int, timeout: float) -> None:
        self._ctx = ctx
        self.min_replicas = min_replicas
        self.timeout = timeout

    def confirm(self, doing: str) -> None:
        """Return once ``min_replicas`` replicas hold every write made before this call;
        ReplicationError if they do not within the timeout."""
        if self.min_replicas == 0:
            return
        ctx = self._ctx
        with translated(ctx.client, f"waiting for replicas after {doing}"):
            pipe = ctx.client.pipeline(transaction=False)
            pipe.incr(ctx.keys.replication_probe)
            pipe.wait(self.min_replicas, max(1, round(self.timeout * 1000)))
            _, confirmed = pipe.execute()
        if confirmed < self.min_replicas:
            raise ReplicationError(
                f"only {confirmed} of the {self.min_replicas} replicas required by "
                f"ROOKHAVEN_REDIS_MIN_REPLICAS confirmed {doing} within "
                f"{self.timeout:g} s (ROOKHAVEN_REDIS_REPLICA_TIMEOUT) at "
                f"{describe(ctx.client)}; it is retried. Check the replicas "
                "(INFO replication) or lower ROOKHAVEN_REDIS_MIN_REPLICAS")
