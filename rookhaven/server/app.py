"""``build_server``: the Rookhaven MCP server, with its backend opened in a lifespan.

Touches no transport: the CLI runs it over stdio or HTTP, tests connect the SDK's
in-memory client to it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from mcp.server.mcpserver import MCPServer

from .. import __version__
from ..config import Settings
from .backend import open_backend
from .ports import Backend
from .tools import TOOLS, State

INSTRUCTIONS = (
    "Seeded, auditable, reproducible retrieval. `retrieve` ranks a corpus and returns the "
    "result with its audit; the same arguments always give the same bytes. For batches, "
    "`submit_retrieval` then `get_job` / `get_result`; `verify_result` replays a stored result."
)


def build_server(settings: Settings, backend: Backend | None = None) -> MCPServer[State]:
    """The MCP server over ``backend``, or over one chosen from ``settings`` at startup.

    A backend passed in belongs to the caller and is not closed here.
    """

    @asynccontextmanager
    async def lifespan(_: MCPServer[State]) -> AsyncIterator[State]:
        if backend is not None:
            yield State(settings, backend)
            return
        opened = open_backend(settings)
        try:
            yield State(settings, opened)
        finally:
            opened.close()

    server: MCPServer[State] = MCPServer(
        "rookhaven", version=__version__, instructions=INSTRUCTIONS, lifespan=lifespan,
        log_level=settings.log_level.upper(),  # type: ignore[arg-type]
    )
    for tool in TOOLS:
        server.add_tool(tool)
    return server
