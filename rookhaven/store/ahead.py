"""Reads sent now and read later: the server prepares the replies while the caller works.

A replay reads its next page while it replays this one. A reader thread did that at a cost:
the threads' turns at the interpreter made the engine calls beside it ~8 us a result slower
(NPL, bm25@2; ADR 0035). Sent on a connection held until the replies are read, the server's
work overlaps the caller's and only the replies' parsing is left on the caller's thread.

Anything unusual takes the ordinary path, with its retries and its messages: a cluster
(its keys span nodes), a failure while sending or reading (a failover, a timeout: the
connection is dropped and the commands are sent again the ordinary way).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import redis

from .cluster import is_cluster


class Ahead:
    """The replies of ``commands``, sent on creation, read once by ``replies``; ``ordinary``
    gives them the ordinary way where they cannot be sent ahead."""

    def __init__(self, client: Any, commands: list[tuple[Any, ...]],
                 ordinary: Callable[[], list[Any]]) -> None:
        self._ordinary = ordinary
        self._count = len(commands)
        self._pool: Any = None
        self._conn: Any = None
        if is_cluster(client) or not commands:
            return
        self._pool = client.connection_pool
        try:
            conn = self._pool.get_connection()
        except redis.RedisError:  # no server now: the ordinary path waits for it, or says so
            return
        try:
            for command in commands:
                conn.send_command(*command)
        except redis.RedisError:
            self._drop(conn)
            return
        self._conn = conn

    def replies(self) -> list[Any]:
        """The commands' replies, in order (raised as the ordinary path raises)."""
        conn, self._conn = self._conn, None
        if conn is None:
            return self._ordinary()
        try:
            got = [conn.read_response() for _ in range(self._count)]
        except redis.RedisError:
            self._drop(conn)
            return self._ordinary()
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
