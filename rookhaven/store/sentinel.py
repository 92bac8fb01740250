"""Connections to a Sentinel service's primary that ask the Sentinels again at every reconnect.

redis-py's Sentinel connection asks where the primary is only in ``connect()``, which a pool
calls when it hands a connection out. A connection that loses its server in the middle of
a command (the primary SIGKILLed under a pipeline) reconnects inside the command's retry
through ``connect_check_health``, which dials the address it had: the dead primary's, for
the whole of ROOKHAVEN_REDIS_TIMEOUT, though the Sentinels promoted a replica seconds after
(redis-py issue 3874). Here every attempt of that retry asks the Sentinels first.
"""

from __future__ import annotations

from typing import Any

from redis.sentinel import SentinelManagedConnection, SentinelManagedSSLConnection


class _Following:
    """The override, for the plain and the TLS connection alike."""

    connection_pool: Any
    retry: Any
    _sock: Any

    def connect_check_health(self, check_health: bool = True,
                             retry_socket_connect: bool = True) -> None:
        if self._sock or not retry_socket_connect or not self.connection_pool.is_master:
            # One attempt at the address already asked for (SentinelManagedConnection's
            # own connect_to), or a replica's connection, which rotates by itself.
            super().connect_check_health(  # type: ignore[misc]
                check_health=check_health, retry_socket_connect=retry_socket_connect)
            return
        self.retry.call_with_retry(lambda: self._to_primary(check_health),
                                   lambda error: self.disconnect(error))  # type: ignore[attr-defined]

    def _to_primary(self, check_health: bool) -> None:
        self.host, self.port = self.connection_pool.get_master_address()
        super().connect_check_health(  # type: ignore[misc]
            check_health=check_health, retry_socket_connect=False)


class PrimaryConnection(_Following, SentinelManagedConnection):
    """A plain connection to the service's primary."""


class PrimarySSLConnection(_Following, SentinelManagedSSLConnection):
    """A TLS connection to the service's primary."""


def connection_class(tls: bool) -> type[SentinelManagedConnection]:
    """The connection class for a primary reached over TLS or not."""
    return PrimarySSLConnection if tls else PrimaryConnection
