"""Connections to Redis from ROOKHAVEN_REDIS_URL, and Redis failures turned into store errors.

Accepted URLs are redis-py's: ``redis://[user[:password]@]host[:port][/db]``, ``rediss://``
(TLS; certificate options as query parameters such as ``ssl_cert_reqs=required``) and
``unix:///path/redis.sock?db=N``. A password never appears in an error or a log line.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import urlsplit, urlunsplit

import redis

from ..errors import ConfigError, StoreUnavailableError

SCHEMES = ("redis", "rediss", "unix")


def redact(url: str) -> str:
    """``url`` with any password replaced by ``***``, safe to print."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    user = parts.username or ""
    host = parts.hostname or ""
    netloc = f"{user}:***@{host}" + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


def check_url(url: str | None) -> str:
    """``url`` if it names a Redis server Rookhaven can use, else a ConfigError saying why."""
    if not url:
        raise ConfigError("no Redis configured: set ROOKHAVEN_REDIS_URL, "
                          "e.g. redis://127.0.0.1:6379/0")
    scheme = urlsplit(url).scheme
    if scheme not in SCHEMES:
        raise ConfigError(f"ROOKHAVEN_REDIS_URL {redact(url)!r} has scheme {scheme!r}; "
                          f"use one of: {', '.join(s + '://' for s in SCHEMES)}")
    return url


def connect(url: str | None, timeout: float = 5.0) -> redis.Redis:
    """A client for ``url`` (bytes in, bytes out); no I/O happens until the first command."""
    checked = check_url(url)
    try:
        return redis.Redis.from_url(
            checked, socket_connect_timeout=timeout, socket_timeout=timeout,
            health_check_interval=30, decode_responses=False,
        )
    except ValueError as exc:
        raise ConfigError(f"ROOKHAVEN_REDIS_URL {redact(checked)!r} is not usable: {exc}") from None


@contextmanager
def translated(client: redis.Redis, doing: str) -> Iterator[None]:
    """Turn any Redis failure inside the block into StoreUnavailableError naming ``doing``."""
    try:
        yield
    except redis.RedisError as exc:
        where = describe(client)
        raise StoreUnavailableError(
            f"Redis at {where} failed while {doing}: {exc.__class__.__name__}: {exc}; "
            "check that the server is running and ROOKHAVEN_REDIS_URL is right"
        ) from exc


def describe(client: redis.Redis) -> str:
    """host:port/db (or the socket path) of ``client``, without credentials."""
    kwargs = client.connection_pool.connection_kwargs
    if "path" in kwargs:
        return f"unix:{kwargs['path']}"
    return f"{kwargs.get('host', '?')}:{kwargs.get('port', '?')}/{kwargs.get('db', 0)}"
