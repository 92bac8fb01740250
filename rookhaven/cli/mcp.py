"""``rookhaven mcp``: serve the MCP tools over stdio, or over streamable HTTP with ``--http``.

On stdio, stdout carries protocol messages only; every log line (ours, the SDK's,
uvicorn's) is a JSON object on stderr.
"""

from __future__ import annotations

import argparse
import logging
import sys
from typing import Any

from ..config import Settings
from ..errors import ConfigError
from ..logs import JsonLineFormatter
from .options import positive_int

# Libraries that log every request at INFO; below debug they only say when something is wrong.
# uvicorn's access log stays: on HTTP, who called and who got 401 is worth a line each.
_CHATTY = ("mcp", "httpx2")


def _drop_color(record: logging.LogRecord) -> bool:
    # uvicorn attaches an ANSI-coloured copy of each message; it is noise in a JSON line.
    record.__dict__.pop("color_message", None)
    return True


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("mcp", help="serve the MCP tools (stdio, or HTTP with --http)",
                                   description=__doc__)
    parser.add_argument("--http", action="store_true",
                        help="serve streamable HTTP at http://HOST:PORT/mcp instead of stdio")
    parser.add_argument("--host", dest="mcp_host",
                        help="address to bind with --http (default: ROOKHAVEN_MCP_HOST, "
                             "127.0.0.1); non-loopback needs ROOKHAVEN_MCP_TOKEN")
    parser.add_argument("--port", type=positive_int, dest="mcp_port",
                        help="port with --http (default: ROOKHAVEN_MCP_PORT, 8765)")
    parser.set_defaults(run=run)


def route_library_logs(level: str) -> None:
    """Send root-logger output (the SDK, uvicorn) to stderr as JSON lines.

    Done before the server is built: MCPServer calls logging.basicConfig, which does
    nothing once the root logger has a handler.
    """
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonLineFormatter())
    handler.addFilter(_drop_color)
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    if level != "debug":
        for name in _CHATTY:
            logging.getLogger(name).setLevel(logging.WARNING)


def run(args: argparse.Namespace, settings: Settings) -> int:
    # Imported here: the SDK takes half a second to import, which every other command
    # would otherwise pay just to build the parser.
    import anyio

    from ..pipeline.warmup import start_beside
    from ..server import build_server
    from ..server.http import check_bind, serve_http
    from ..server.stdio import serve_stdio
    from ..store import urls

    if (args.mcp_host or args.mcp_port) and not args.http:
        raise ConfigError("--host and --port apply only with --http")
    if args.http:
        check_bind(settings.mcp_host, settings.mcp_token is not None
                   or settings.mcp_tokens_file is not None)
    if settings.redis_url is not None:
        # Jobs go through the broker: a URL that cannot be one is refused here in one line,
        # not inside the server's task group as an exception group.
        urls.parse(*settings.broker, broker=True)
    route_library_logs(settings.log_level)
    # A first call must not wait for numba's compile (20-30 s from an empty cache): the
    # server answers on the reference paths until the kernels are ready (ADR 0026), unless
    # ROOKHAVEN_KERNEL_WARMUP=none says the cache is filled and they load at first use.
    kernels = start_beside(settings)
    try:
        server = build_server(settings, kernels=kernels)
        if args.http:
            serve_http(server, settings)
        else:
            anyio.run(serve_stdio, server)
    finally:
        if kernels is not None:
            kernels.stop()
    return 0
