"""The scripts a transaction calls, loaded by each new connection before its first command.

Inside a MULTI/EXEC (store.rounds) a script refused NOSCRIPT is refused after the commands
queued before it ran: a chunk's results would stand, until the script is loaded and called
again, without their log leaves. A server lacks its scripts after a restart, a failover or
a SCRIPT FLUSH; the first two come with a new connection, which loads them here (one
SCRIPT EXISTS, and a SCRIPT LOAD for each one missing).
"""

from __future__ import annotations

import hashlib
from typing import Any

from redis.exceptions import ResponseError

from .scripts import TRANSACTED

_SHAS = [hashlib.sha1(body.encode()).hexdigest() for body in TRANSACTED]


def load(connection: Any) -> None:
    """Load into ``connection``'s server each script of TRANSACTED it lacks (a cluster
    client's ``redis_connect_func``: the cluster has already made its handshake)."""
    try:
        connection.send_command("SCRIPT", "EXISTS", *_SHAS)
        for body, present in zip(TRANSACTED, connection.read_response(), strict=True):
            if not present:
                connection.send_command("SCRIPT", "LOAD", body)
                connection.read_response()
    except ResponseError:
        # SCRIPT refused (an ACL or a managed service without it): a transaction that
        # meets NOSCRIPT still completes, store.rounds loads the script and calls it again.
        return


def connected(connection: Any) -> None:
    """A single node's or a Sentinel primary's ``redis_connect_func``: redis-py's handshake
    (AUTH, HELLO, SELECT), then ``load``."""
    connection.on_connect()
    load(connection)
