"""An embedded Redis-compatible server (fakeredis over TCP on loopback) for ``rookhaven demo``.

Not durable and not for work: it lets the demo run the whole pipeline (store, broker, a
Celery worker) with no service installed.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from fakeredis import TcpFakeServer


@contextmanager
def embedded_redis() -> Iterator[str]:
    """A fakeredis server on a free loopback port, serving from daemon threads; its URL."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = int(probe.getsockname()[1])
    server = TcpFakeServer(("127.0.0.1", port), server_type="redis")
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, name="embedded-redis", daemon=True)
    thread.start()
    try:
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        server.shutdown()
        server.server_close()
