"""``build_server``: the Rookhaven MCP server, with its backend opened in a lifespan.

Touches no transport: the CLI runs it over stdio or HTTP, tests connect the SDK's
in-memory client to it. It advertises what it serves and nothing else: tools, resources
and logging, no prompts.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceNotFoundError
from mcp.shared.exceptions import MCPError
from mcp_types import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    CallToolResult,
    InputRequiredResult,
    SetLevelRequestParams,
    TextContent,
)

from .. import __version__
from ..config import Settings
from ..errors import shown
from ..metrics import MCP_REFUSALS
from ..pipeline.warmup import BackgroundWarmUp
from . import resources
from .arguments import StrictTool
from .backend import open_backend
from .notify import set_level
from .ports import Backend
from .protocol import explain_invalid_params, one_page
from .runs import RunBoard
from .runtools import RUN_ANNOTATIONS, RUN_TOOLS
from .tokens import TOOL_SCOPES, grant_in
from .tools import ANNOTATIONS, RETRIEVAL, TOOLS, State, limits
from .toolsearch import search_tools

log = logging.getLogger("rookhaven.server")

INSTRUCTIONS = (
    "Seeded, auditable, reproducible retrieval. `retrieve` ranks a corpus and returns the "
    "result (hits and audit) with its result key; the same arguments always give the same "
    "bytes. For batches, `submit_retrieval` then `get_job` / `get_result`; `verify_result` "
    "replays one stored result, and `start_verification` / `start_rerank` start the "
    "auditors' runs, followed with `get_run`. Results, audits and corpora are also "
    "resources (rookhaven://results/{key}, rookhaven://audits/{key}, "
    "rookhaven://corpora/{ref})."
)


class RookhavenServer(MCPServer[State]):
    """The SDK's server with an unknown tool answered as the spec names it: JSON-RPC error
    -32602, not a tool result; and the compiled kernels taken up once they are ready."""

    kernels: BackgroundWarmUp | None = None

    async def call_tool(self, name: str, arguments: dict[str, Any],
                        context: Context[State, Any] | None = None,
                        ) -> CallToolResult | InputRequiredResult:
        if self.kernels is not None and self.kernels.switch_if_ready():
            log.info("using the compiled kernels")
        if self._tool_manager.get_tool(name) is None:
            known = ", ".join(t.name for t in self._tool_manager.list_tools())
            # Cut: an error must not grow with what the client sent.
            raise MCPError(INVALID_PARAMS, f"Unknown tool: {shown(name, 64)}; this server's "
                                           f"tools are {known}")
        grant = grant_in(context)
        if grant is not None and not grant.allows(name):
            MCP_REFUSALS.labels(grant.name, "scope").inc()
            needed = TOOL_SCOPES.get(name, "read")
            return CallToolResult(isError=True, content=[TextContent(type="text", text=(
                f"token {grant.name!r} may not call {name}: it needs the {needed!r} scope and "
                f"has {', '.join(sorted(grant.scopes))}; ask the operator for a token with "
                f"it (`rookhaven token add NAME --scopes {needed}`)"))])
        return await super().call_tool(name, arguments, context)

    async def read_resource(self, uri: Any, context: Context[State, Any] | None = None) -> Any:
        grant = grant_in(context)
        if grant is not None and "read" not in grant.scopes:
            MCP_REFUSALS.labels(grant.name, "scope").inc()
            raise MCPError(INVALID_REQUEST, f"token {grant.name!r} may not read resources: it "
                                            "needs the 'read' scope")
        try:
            return await super().read_resource(uri, context)
        except ResourceNotFoundError as exc:
            if not str(exc).startswith("Unknown resource: "):  # ours: a named thing is missing
                raise
            # The SDK's says the whole URI, twice (message and data): cut, as for tools.
            known = ", ".join(t.uri_template for t in self._resource_manager.list_templates())
            raise MCPError(INVALID_PARAMS, f"Unknown resource: {shown(str(uri), 64)}; this "
                                           f"server's resources are {known}") from None


def build_server(settings: Settings, backend: Backend | None = None,
                 kernels: BackgroundWarmUp | None = None) -> MCPServer[State]:
    """The MCP server over ``backend``, or over one chosen from ``settings`` at startup.

    A backend passed in belongs to the caller and is not closed here. ``kernels``: their
    compile, started by the caller, whose result the server takes up when ready.
    """

    @asynccontextmanager
    async def lifespan(_: MCPServer[State]) -> AsyncIterator[State]:
        opened = backend if backend is not None else open_backend(settings)
        try:
            async with anyio.create_task_group() as tasks:
                yield State(settings, opened, RunBoard(tasks))
                tasks.cancel_scope.cancel()  # runs still going end with the server
        finally:
            if backend is None:
                opened.close()

    annotations = {**ANNOTATIONS, **RUN_ANNOTATIONS, "search_tools": ANNOTATIONS["retrieve"]}
    # The settings' limits in the schemas: a request's on the retrieval tools, a sample
    # seed's (stored with its run) on start_verification.
    bounds = limits(settings)
    limited = {fn.__name__: bounds for fn in (*RETRIEVAL, search_tools)}
    limited["start_verification"] = {"seed": bounds["seed"]}
    tools = [StrictTool.strict(fn, limited.get(fn.__name__), annotations[fn.__name__])
             for fn in (*TOOLS, search_tools, *RUN_TOOLS)]
    server = RookhavenServer(
        "rookhaven", version=__version__, instructions=INSTRUCTIONS, lifespan=lifespan,
        log_level=settings.log_level.upper(),  # type: ignore[arg-type]
        tools=list[Any](tools),
    )
    server.kernels = kernels
    resources.register(server)
    lowlevel = server._lowlevel_server
    # No prompts are offered, so none are advertised: prompts/* is then "method not found".
    for method in ("prompts/list", "prompts/get"):
        lowlevel._request_handlers.pop(method, None)
    lowlevel.add_request_handler("logging/setLevel", SetLevelRequestParams, set_level)
    for method in ("tools/list", "resources/templates/list"):  # answered in one page
        entry = lowlevel._request_handlers[method]
        lowlevel.add_request_handler(method, entry.params_type, one_page(method, entry.handler))
    lowlevel.middleware.append(explain_invalid_params)
    return server
