"""Redis Cluster clients: patient through a failover, and what a cluster needs that a single
Redis does not (a key in a node's slots to probe its replication).

A cluster is named by a ``redis+cluster://`` URL (store.urls). The store shards its keys so
every script touches one slot (docs/adr/0030-log-shards.md); the Celery broker cannot live
on a cluster.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import suppress
from typing import Any

from redis.backoff import NoBackoff
from redis.cluster import ClusterNode, RedisCluster
from redis.crc import key_slot
from redis.exceptions import ClusterDownError, RedisClusterException, RedisError, TryAgainError
from redis.retry import Retry

from ..errors import ConfigError, StoreUnavailableError
from . import preload
from .patience import Patience
from .urls import ClusterURL, login


class PatientCluster(RedisCluster):
    """A cluster client whose commands and pipelines wait out a failover up to
    ROOKHAVEN_REDIS_TIMEOUT.

    redis-py retries a cluster command a fixed number of times, never pausing long enough
    for a primary's failover (seconds), and a pipeline can keep routing to a dead primary
    from a stale slot map. Here every failed attempt relearns the slots from any live node
    (those named in the URL or learned since) before the next, until the deadline.
    """

    def __init__(self, *, patience: Patience, **kwargs: Any) -> None:
        self.patience = patience  # the constructor already sends commands
        super().__init__(**kwargs)

    def execute_command(self, *args: Any, **kwargs: Any) -> Any:
        run = super().execute_command
        return self.patience.call_with_retry(lambda: run(*args, **kwargs),  # type: ignore[no-untyped-call]
                                             lambda _error: self.relearn())

    def pipeline(self, transaction: Any = None, shard_hint: Any = None) -> Any:
        make = super().pipeline
        return PatientPipeline(lambda: make(transaction, shard_hint), self)  # type: ignore[no-untyped-call]

    def relearn(self) -> None:
        """Ask the live nodes for the slot map again (quietly: while the cluster heals, no
        node may answer yet, and the next attempt's own failure is the one reported)."""
        with suppress(RedisError, RedisClusterException):
            self.nodes_manager.initialize()


class PatientPipeline:
    """A cluster pipeline sent again, whole, after a failure that may be a failover.

    The commands queued are kept, so a failed attempt is replayed on a new pipeline once the
    slot map is relearnt. Every pipeline the store sends is safe to replay: reads, and writes
    that set a value (SET, HSET, ZADD NX, EXPIRE) rather than add to one. Job scripts go
    through ``rounds.Round``, which replays a call only where it did not run.
    """

    def __init__(self, make: Callable[[], Any], client: PatientCluster) -> None:
        self._make = make
        self._client = client
        self._queued: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = []

    def __getattr__(self, name: str) -> Callable[..., PatientPipeline]:
        def queue(*args: Any, **kwargs: Any) -> PatientPipeline:
            self._queued.append((name, args, kwargs))
            return self
        return queue

    def __len__(self) -> int:
        return len(self._queued)

    def __enter__(self) -> PatientPipeline:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.reset()

    def execute(self, raise_on_error: bool = True) -> list[Any]:
        """Every queued command's answer, in order."""
        queued, self._queued = self._queued, []

        def attempt() -> list[Any]:
            pipe = self._make()
            for name, args, kwargs in queued:
                getattr(pipe, name)(*args, **kwargs)
            return list(pipe.execute(raise_on_error=raise_on_error))

        return self._client.patience.call_with_retry(attempt, lambda _error: self._client.relearn())

    def reset(self) -> None:
        self._queued = []


def client(url: ClusterURL, options: dict[str, Any]) -> RedisCluster:
    """A cluster client (bytes in, bytes out): it learns the slots from the nodes named and
    follows MOVED and ASK through a reshard and a failover. Unlike a single-node client it
    asks the nodes at once, waiting up to ROOKHAVEN_REDIS_TIMEOUT for one to answer;
    StoreUnavailableError if none does."""
    given: dict[str, Any] = {**options, **login(url.username, url.password)}
    waited: Patience = given.pop("retry")
    # redis-py gives a cluster's node clients only the options it knows (not a packer):
    # their commands are packed by its default (store.wire says what that costs).
    given.pop("command_packer", None)
    # The cluster makes each node connection's handshake itself, then calls this.
    given["redis_connect_func"] = preload.load
    if url.tls:
        given.update(ssl=True, **dict(url.tls_options))
    nodes = [ClusterNode(h, p) for h, p in url.nodes]  # type: ignore[no-untyped-call]
    patience = Patience(waited.seconds, ClusterDownError, TryAgainError, RedisClusterException)

    def made() -> RedisCluster:
        try:
            return PatientCluster(patience=patience, startup_nodes=nodes,
                                  decode_responses=False, require_full_coverage=True,
                                  retry=Retry(NoBackoff(), 3), **given)
        except RedisClusterException as exc:
            if "not enabled" in str(exc):  # it answered: waiting will not make it a cluster
                raise ConfigError(
                    f"ROOKHAVEN_REDIS_URL names a Redis Cluster, but {url.hosts()} "
                    "answered as a single Redis (cluster mode is not enabled there): use "
                    "redis://HOST:PORT/DB for it") from None
            raise

    try:
        return patience.call_with_retry(made, lambda _error: None)
    except (RedisError, RedisClusterException) as exc:
        raise StoreUnavailableError(
            f"{url.describe()} did not answer: {exc.__class__.__name__}: {exc} (retried for "
            f"{waited.seconds:g} s, ROOKHAVEN_REDIS_TIMEOUT); check that the nodes are up "
            "and ROOKHAVEN_REDIS_URL names some of them") from None


def is_cluster(redis_client: Any) -> bool:
    """Whether ``redis_client`` talks to a Redis Cluster."""
    return isinstance(redis_client, RedisCluster)


def key_on(redis_client: RedisCluster, node: ClusterNode, prefix: str) -> str | None:
    """A key under ``prefix`` in a slot ``node`` serves as primary (None if it serves none):
    a write there reaches ``node`` and is replicated by it alone."""
    slots = redis_client.nodes_manager.slots_cache
    for n in range(1 << 16):
        name = f"{prefix}:{{{n}}}"
        owners = slots.get(key_slot(name.encode()))
        if owners and owners[0].name == node.name:
            return name
    return None
