"""Replication: proof, from Redis WAIT, that replicas hold what this process wrote.

Redis replicates asynchronously, so a write the primary accepted can vanish in a failover.
WAIT blocks until that many replicas acknowledged the calling connection's last write; the
probe write before it makes that "every write so far", whichever pooled connection made
them, because a replica applies the primary's writes in order. On a cluster each primary
replicates its own slots, so each is asked. See docs/adr/0017-sentinel.md.
"""

from __future__ import annotations

from typing import Any

from ..errors import ReplicationError
from . import cluster
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
            confirmed = min(self._wait(client, probe) for client, probe in self._primaries())
        if confirmed < self.min_replicas:
            raise ReplicationError(
                f"only {confirmed} of the {self.min_replicas} replicas required by "
                f"ROOKHAVEN_REDIS_MIN_REPLICAS confirmed {doing} within "
                f"{self.timeout:g} s (ROOKHAVEN_REDIS_REPLICA_TIMEOUT) at "
                f"{describe(ctx.client)}; it is retried. Check the replicas "
                "(INFO replication) or lower ROOKHAVEN_REDIS_MIN_REPLICAS")

    def _primaries(self) -> list[tuple[Any, str]]:
        """(client, probe key) for each primary this process may have written to: the one
        Redis, or each primary of a cluster with a key in its own slots."""
        client, probe = self._ctx.client, self._ctx.keys.replication_probe
        if not cluster.is_cluster(client):
            return [(client, probe)]
        found = []
        for node in client.get_primaries():
            key = cluster.key_on(client, node, probe)
            if key is not None:  # a primary serving no slot holds nothing of ours
                found.append((client.get_redis_connection(node), key))
        return found

    def _wait(self, client: Any, probe: str) -> int:
        """WAIT on ``client``'s primary after a write there: how many replicas confirmed."""
        pipe = client.pipeline(transaction=False)
        pipe.incr(probe)
        pipe.wait(self.min_replicas, max(1, round(self.timeout * 1000)))
        return int(pipe.execute()[1])
