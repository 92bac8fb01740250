"""Replication: proof, from Redis WAIT, that replicas hold what this process wrote.

Redis replicates asynchronously, so a write the primary accepted can vanish in a failover.
WAIT blocks until that many replicas acknowledged the calling connection's last write; the
probe write before it makes that "every write so far", whichever pooled connection made
them, because a replica applies the primary's writes in order. On a cluster each primary
replicates its own slots, so each is asked. See docs/adr/0017-sentinel.md.

A shortfall is waited out like a lost connection, up to ROOKHAVEN_REDIS_TIMEOUT: after a
failover the promoted primary has no replica until one joins it (seconds to a minute, an
operator's step on a cluster), and a client that gave up at the first WAIT would fail a
submission the cluster is about to accept. But a WAIT answered by the promoted primary says
nothing of the writes the dead one took with it: a writer ``mark``s the primaries'
replication ids before writing, and ``confirm`` refuses (PrimaryChangedError) when one of
them is gone, so the writes are made again instead of acknowledged.
"""

from __future__ import annotations

from contextlib import suppress
from typing import Any

from redis.exceptions import (
    AskError,
    ClusterDownError,
    MovedError,
    RedisClusterException,
    RedisError,
    ResponseError,
    TryAgainError,
)
from redis.sentinel import SentinelConnectionPool

from ..errors import PrimaryChangedError, ReplicationError
from . import cluster
from .connection import describe, translated
from .context import StoreContext
from .patience import Patience

# A cluster healing or resharding: the node asked is down, or no longer serves the probe.
_HEALING = (ClusterDownError, TryAgainError, MovedError, AskError, RedisClusterException)


class _Short(Exception):
    """Some primary's replicas confirmed fewer writes than required (retried)."""

    def __init__(self, short: list[tuple[str, int]]) -> None:
        super().__init__(short)
        self.short = short


class Replication:
    """Confirms writes reached ``min_replicas`` replicas (0: confirms nothing, costs nothing).

    Each WAIT lasts up to ``timeout`` s (ROOKHAVEN_REDIS_REPLICA_TIMEOUT); they are repeated
    for up to ``patience`` s (ROOKHAVEN_REDIS_TIMEOUT) before the write is refused."""

    def __init__(self, ctx: StoreContext, min_replicas: int, timeout: float,
                 patience: float | None = None) -> None:
        self._ctx = ctx
        self.min_replicas = min_replicas
        self.timeout = timeout
        self.patience = timeout if patience is None else max(patience, timeout)
        self._last: frozenset[bytes] | None = None  # the ids the last confirmation saw

    def mark(self) -> frozenset[bytes] | None:
        """The replication ids of the primaries, taken before writing, for ``confirm`` to
        compare (None when nothing is confirmed, or the server does not say).

        The ids the last confirmation saw serve (no round trip): a primary replaced since
        then is caught all the same, the writes made on its successor only made again."""
        if self.min_replicas == 0:
            return None
        if self._last is not None:
            return self._last
        with translated(self._ctx.client, "reading the primaries' replication ids"):
            return _all_known(Patience(self.patience, *_HEALING).call_with_retry(
                lambda: {replication_id(client) for _, client, _ in self._primaries()},
                lambda _error: self._relearn()))

    def confirm(self, doing: str, since: frozenset[bytes] | None = None) -> None:
        """Return once ``min_replicas`` replicas hold every write made before this call;
        ReplicationError if they do not within the patience, PrimaryChangedError if a
        primary of the ``mark`` taken before the writes (``since``) was replaced meanwhile."""
        if self.min_replicas == 0:
            return
        ctx = self._ctx
        waiting = Patience(self.patience, _Short, *_HEALING)
        try:
            with translated(ctx.client, f"waiting for replicas after {doing}"):
                now = waiting.call_with_retry(self._check, lambda _error: self._relearn())
        except _Short as exc:
            where = ", ".join(f"{f'primary {name}' if name else describe(ctx.client)} had "
                              f"{confirmed}" for name, confirmed in exc.short)
            least = min(confirmed for _, confirmed in exc.short)
            raise ReplicationError(
                f"only {least} of the {self.min_replicas} replicas required by "
                f"ROOKHAVEN_REDIS_MIN_REPLICAS confirmed {doing} within {self.patience:g} s "
                f"(ROOKHAVEN_REDIS_TIMEOUT; each WAIT {self.timeout:g} s, "
                f"ROOKHAVEN_REDIS_REPLICA_TIMEOUT): {where}. Give each primary named a replica "
                "(INFO replication lists its own; after a failover, add one as "
                "docs/operations.md says) or lower ROOKHAVEN_REDIS_MIN_REPLICAS") from None
        seen = self._last = _all_known(now)
        if since is not None and seen is not None and since - seen:
            raise PrimaryChangedError(
                f"a primary written to while {doing} was replaced before its replicas "
                f"confirmed the writes (a failover; primaries now at {describe(ctx.client)}): "
                "they may be lost with it, so they are made again")

    def _check(self) -> set[bytes | None]:
        """One WAIT at each primary, and the replication ids they answered with; _Short
        naming the primaries short of replicas."""
        short, ids = [], set()
        for name, client, probe in self._primaries():
            confirmed, replid = self._wait(client, probe)
            if confirmed < self.min_replicas:
                short.append((name, confirmed))
            ids.add(replid)
        if short:
            raise _Short(short)
        return ids

    def _relearn(self) -> None:
        """After a shortfall or a lost node: the primaries may have changed. A cluster's
        map is asked for again; a Sentinel service's primary too, since a pooled connection
        stays with the primary it was made to, which after a planned failover
        (``SENTINEL FAILOVER``) takes writes no replica will ever hold until its Sentinels
        demote it, seconds later (a new primary disconnects the idle connections)."""
        client = self._ctx.client
        if cluster.is_cluster(client):
            client.relearn()
        elif isinstance(pool := getattr(client, "connection_pool", None),
                        SentinelConnectionPool):
            with suppress(RedisError):
                pool.get_master_address()  # type: ignore[no-untyped-call]

    def _primaries(self) -> list[tuple[str, Any, str]]:
        """(node name, client, probe key) for each primary this process may have written
        to: the one Redis (named ""), or each primary of a cluster with a key in its own
        slots."""
        client, probe = self._ctx.client, self._ctx.keys.replication_probe
        if not cluster.is_cluster(client):
            return [("", client, probe)]
        found = []
        for node in client.get_primaries():
            key = cluster.key_on(client, node, probe)
            if key is not None:  # a primary serving no slot holds nothing of ours
                found.append((node.name, client.get_redis_connection(node), key))
        return found

    def _wait(self, client: Any, probe: str) -> tuple[int, bytes | None]:
        """WAIT on ``client``'s primary after a write there: how many replicas confirmed,
        and the primary's replication id, in one round trip."""
        pipe = client.pipeline(transaction=False)
        pipe.incr(probe)
        pipe.wait(self.min_replicas, max(1, round(self.timeout * 1000)))
        pipe.info("replication")
        written, confirmed, info = pipe.execute(raise_on_error=False)
        if isinstance(info, ResponseError):  # INFO not served: no id, as ``replication_id``
            info = {}
        for answer in (written, confirmed, info):
            if isinstance(answer, Exception):
                raise answer
        return int(confirmed), _replid(info)


def replication_id(client: Any) -> bytes | None:
    """The replication id of ``client``'s server: a promoted replica, or a restarted
    server, has a new one (None where INFO is not served, as by fakeredis)."""
    try:
        return _replid(client.info("replication"))
    except ResponseError:
        return None


def _replid(info: dict[str, Any]) -> bytes | None:
    """The replication id in an ``INFO replication`` answer, if it has one."""
    replid = info.get("master_replid")
    return str(replid).encode() if replid else None


def _all_known(ids: set[bytes | None]) -> frozenset[bytes] | None:
    """``ids`` if every primary said its id, else None (nothing to compare)."""
    return None if None in ids else frozenset(i for i in ids if i is not None)
