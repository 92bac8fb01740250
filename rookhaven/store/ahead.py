"""Reads sent now and read later: the server prepares the replies while the caller works.

A replay reads its next page while it replays this one. A reader thread did that at a cost:
the threads' turns at the interpreter made the engine calls beside it ~8 us a result slower
(NPL, bm25@2; ADR 0037). Sent on a connection held until the replies are read, the server's
work overlaps the caller's and only the replies' parsing is left on the caller's thread.

The commands go in one write, as redis-py's pipelines send theirs: a health check falls
before it, never between two commands whose replies are pending. A cluster (its keys span
nodes) and a failure while sending or reading (a failover, a timeout) take the ordinary
path, with its retries and messages; a connection is never given back with replies unread.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import redis

from .cluster import is_cluster
from .connection import translated


class Ahead:
    """The replies of ``commands``, sent on creation, read once by ``replies``; ``ordinary``
    gives them the ordinary way where they cannot be sent ahead. ``doing`` names the read
    in the message when no server could be reached at all."""

    def __init__(self, client: Any, commands: list[tuple[Any, ...]],
                 ordinary: Callable[[], list[Any]], doing: str) -> None:
        self._client = client
        self._ordinary = ordinary
        self._doing = doing
        self._count = len(commands)
        self._pool: Any = None
        self._conn: Any = None
        self._failure: redis.RedisError | None = None
        if is_cluster(client) or not commands:
            return
        self._pool = client.connection_pool
        try:
            conn = self._pool.get_connection()
        except redis.RedisError as exc:
            # Connecting already waited as long as the ordinary path would: say so at the
            # read rather than wait again.
            self._failure = exc
            return
        try:
            conn.send_packed_command(conn.pack_commands(commands))
        except redis.RedisError:
            self._drop(conn)
            return
        except BaseException:
            self._drop(conn)
            raise
        self._conn = conn

    def replies(self) -> list[Any]:
        """The commands' replies, in order (raised as the ordinary path raises)."""
        if self._failure is not None:
            with translated(self._client, self._doing):
                raise self._failure
        conn, self._conn = self._conn, None
        if conn is None:
            return self._ordinary()
        try:
            got = [conn.read_response() for _ in range(self._count)]
        except redis.RedisError:
            self._drop(conn)
            return self._ordinary()
        except BaseException:
            self._drop(conn)
            raise
        self._pool.release(conn)
        return got

    def cancel(self) -> None:
        """Give the connection back unread (its replies are dropped with it)."""
        conn, self._conn = self._conn, None
        if conn is not None:
            self._drop(conn)

    def _drop(self, conn: Any) -> None:
        # Replies left unread on a connection would answer its next user's commands.
        conn.disconnect()
        self._pool.release(conn)
