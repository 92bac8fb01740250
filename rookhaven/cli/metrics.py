"""``rookhaven metrics``: serve the store's Prometheus metrics, or print them once.

Workers serve the same metrics themselves when ROOKHAVEN_METRICS_PORT is set, and the MCP
server at /metrics over HTTP; this command is for hosts that run neither.
"""

from __future__ import annotations

import argparse
import sys
import threading
from typing import Any

from ..config import Settings
from ..metrics import exposition, serve
from ..store import Store
from .options import positive_int

# Prometheus's registered default port for exporters of this kind; a worker serves none
# unless ROOKHAVEN_METRICS_PORT is set, but this command exists to serve.
EXPORTER_PORT = 9464


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("metrics", help="serve or print Prometheus metrics",
                                   description=__doc__)
    parser.add_argument("--once", action="store_true", help="print the metrics and exit")
    parser.add_argument("--host", dest="metrics_host",
                        help="bind address (default: ROOKHAVEN_METRICS_HOST)")
    parser.add_argument("--port", type=positive_int, dest="metrics_port",
                        help=f"port (default: ROOKHAVEN_METRICS_PORT, else {EXPORTER_PORT})")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace, settings: Settings) -> int:
    store = Store.from_settings(settings)
    if args.once:
        sys.stdout.buffer.write(exposition(store))
        return 0
    host = settings.metrics_host
    port = settings.metrics_port or EXPORTER_PORT
    serve(store, host, port)
    print(f"serving Prometheus metrics on http://{host}:{port}/metrics", file=sys.stderr)
    threading.Event().wait()
    return 0
