"""Connections to Redis from ROOKHAVEN_REDIS_URL, and Redis failures turned into store errors.

Every URL form (a single Redis, a Sentinel service, a cluster) is checked, parsed and
redacted by store.urls, once a connection; a password never appears in an error or a log
line.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import redis
from redis.backoff import NoBackoff
from redis.exceptions import AskError, MovedError
from redis.retry import Retry
from redis.sentinel import MasterNotFoundError, Sentinel, SentinelConnectionPool

from ..errors import ConfigError, StoreUnavailableError
from . import cluster, preload, sentinel, urls
from .patience import Patience
from .urls import SentinelURL, StoreURL
from .wire import Packer


def connect(url: str | StoreURL | None, timeout: float = 5.0) -> redis.Redis:
    """A client for ``url`` (bytes in, bytes out); no I/O happens until the first command,
    except for a cluster, whose client learns the slots at once. A command that loses its
    connection is retried for up to ``timeout`` seconds."""
    where = url if isinstance(url, StoreURL) else urls.parse(url)
    options: dict[str, Any] = {"socket_connect_timeout": timeout, "socket_timeout": timeout,
                               "retry": Patience(timeout), "command_packer": Packer(),
                               "redis_connect_func": preload.connected}
    try:
        if where.sentinel is not None:
            return _primary(where.sentinel, options)
        if where.cluster is not None:
            # Served the same commands, routed by slot: typed as the single-node client.
            return cluster.client(where.cluster, options)  # type: ignore[return-value]
        return redis.Redis.from_url(where.text, health_check_interval=30,
                                    decode_responses=False, **options)
    except ValueError as exc:
        raise ConfigError(f"ROOKHAVEN_REDIS_URL {where.shown!r} is not usable: {exc}") from None


@contextmanager
def translated(client: redis.Redis, doing: str) -> Iterator[None]:
    """Turn any Redis failure inside the block into StoreUnavailableError naming ``doing``."""
    try:
        yield
    except redis.RedisError as exc:
        raise StoreUnavailableError(
            f"Redis at {describe(client)} failed while {doing}: {_cause(exc)}"
            f"{_waited(client, exc)}; check that the server is running and "
            "ROOKHAVEN_REDIS_URL is right") from exc


def _cause(exc: redis.RedisError) -> str:
    if isinstance(exc, MovedError | AskError):
        return (f"{exc.__class__.__name__}: {exc} (the server is a Redis Cluster node: name "
                "the cluster as redis+cluster://HOST:PORT,...)")
    if isinstance(exc, MasterNotFoundError):
        # redis-py's text lists every Sentinel's client object (~1.5 KB): the service and
        # the Sentinels asked are already in the message.
        return "MasterNotFoundError: no Sentinel named a reachable primary"
    return f"{exc.__class__.__name__}: {exc}"


def _waited(client: redis.Redis, exc: redis.RedisError) -> str:
    retry = (client.patience if cluster.is_cluster(client)  # type: ignore[attr-defined]
             else client.connection_pool.connection_kwargs.get("retry"))
    if isinstance(retry, Patience) and isinstance(exc, redis.ConnectionError | redis.TimeoutError):
        return f" (retried for {retry.seconds:g} s, ROOKHAVEN_REDIS_TIMEOUT)"
    return ""


def _primary(url: SentinelURL, options: dict[str, Any]) -> redis.Redis:
    """A client of the service's primary: every new connection asks the Sentinels where the
    primary is, so after a failover the client follows without a restart."""
    tls = url.tls_kwargs()
    # Each Sentinel is asked once per attempt (redis-py's default retries each up to 3 times
    # with pauses of seconds); the attempts are the data connection's Patience.
    # A Sentinel's own client takes no command packer (its commands are small anyway) and
    # loads no scripts.
    asking = {**{k: v for k, v in options.items()
                 if k not in ("command_packer", "redis_connect_func")},
              "retry": Retry(NoBackoff(), 0)}
    # Typed as Any: they are connection options, never Sentinel's own named parameters.
    # ``ssl`` picks the connection class, which is named here (store.sentinel).
    connection: dict[str, Any] = {k: v for k, v in {**options, **tls}.items() if k != "ssl"}
    data: dict[str, Any] = {"db": url.db, "health_check_interval": 30,
                            "decode_responses": False, **url.data_login(),
                            "connection_class": sentinel.connection_class(bool(tls))}
    manager = Sentinel(list(url.sentinels),
                       sentinel_kwargs={**asking, **tls, **url.sentinel_login()}, **connection)
    client: redis.Redis = manager.master_for(url.service, redis_class=redis.Redis, **data)
    return client


def describe(client: redis.Redis) -> str:
    """host:port/db (or the socket path, or the Sentinel service) of ``client``, without
    credentials."""
    if cluster.is_cluster(client):
        nodes = client.get_primaries()  # type: ignore[attr-defined]
        return "Redis Cluster primaries " + ",".join(node.name for node in nodes)
    pool = client.connection_pool
    if isinstance(pool, SentinelConnectionPool):
        nodes = (each.connection_pool.connection_kwargs
                 for each in pool.sentinel_manager.sentinels)
        hosts = ",".join(f"{kw.get('host', '?')}:{kw.get('port', '?')}" for kw in nodes)
        return (f"the primary of Sentinel service {pool.service_name!r} "
                f"(db {pool.connection_kwargs.get('db', 0)}) via {hosts}")
    kwargs = pool.connection_kwargs
    if "path" in kwargs:
        return f"unix:{kwargs['path']}"
    return f"{kwargs.get('host', '?')}:{kwargs.get('port', '?')}/{kwargs.get('db', 0)}"
