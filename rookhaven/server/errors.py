"""The one place Rookhaven errors meet MCP's two error channels.

- Tool-error channel (``isError: true`` with a message the caller or model can act on):
  every RookhavenError. InputError subclasses are the caller's to fix (bad argument, over
  a limit, unknown corpus or job, pipeline not configured); StoreUnavailableError and
  IntegrityError are operational, but the caller still needs to read them ("Redis down"),
  so they travel the same way with a prefix saying what kind of failure it was.
- JSON-RPC error channel (protocol misuse): malformed JSON, an unknown method, params that
  are not an object, an unknown tool. The SDK answers those before a tool runs, so no
  Rookhaven error is ever turned into one here (server/protocol.py gives the SDK's bare
  -32602s their reason).
- Resource reads have only the JSON-RPC channel: an unknown result, audit, corpus or run is
  -32602 with the message (SEP-2164's code for "resource not found", which the SDK gives a
  ResourceNotFoundError), another caller's mistake is -32602 too, and an operational
  failure is -32603 with the same prefixes as a tool error.
- Anything else is a bug: it propagates, the SDK logs its traceback on stderr and the caller
  sees only "Error executing tool <name>", never the internals.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TypeVar

import anyio.to_thread
from mcp.server.mcpserver.exceptions import ResourceNotFoundError, ToolError
from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR, INVALID_PARAMS

from ..errors import (
    InputError,
    IntegrityError,
    NotFoundError,
    RookhavenError,
    StoreUnavailableError,
)
from ..metrics import MCP_CALLS

T = TypeVar("T")


def tool_error(exc: RookhavenError) -> ToolError:
    """The tool error a caller sees for ``exc``."""
    if isinstance(exc, InputError):
        return ToolError(str(exc))
    if isinstance(exc, StoreUnavailableError):
        return ToolError(f"store unavailable (is Redis at ROOKHAVEN_REDIS_URL up?): {exc}")
    if isinstance(exc, IntegrityError):
        return ToolError(f"integrity violation, reported to the operators: {exc}")
    return ToolError(f"failed: {exc}")


def resource_error(exc: RookhavenError) -> Exception:
    """The JSON-RPC error a resource read answers with for ``exc``."""
    if isinstance(exc, NotFoundError):
        return ResourceNotFoundError(str(exc))
    if isinstance(exc, InputError):
        return MCPError(INVALID_PARAMS, str(exc))
    return MCPError(INTERNAL_ERROR, str(tool_error(exc)))


async def off_loop(fn: Callable[..., T], *args: object,
                   mapped: Callable[[RookhavenError], Exception] = tool_error) -> T:
    """``fn(*args)`` on a worker thread, so ranking or Redis never stalls the event loop,
    with Rookhaven errors mapped by ``mapped`` (to tool errors unless told otherwise).

    A cancelled call is released at once; the thread's work finishes unseen (the core
    cannot be interrupted, and its result is content-addressed, so nothing is half-done).
    """
    return await anyio.to_thread.run_sync(functools.partial(on_loop, fn, *args, mapped=mapped),
                                          abandon_on_cancel=True)


def on_loop(fn: Callable[..., T], *args: object,
            mapped: Callable[[RookhavenError], Exception] = tool_error) -> T:
    """``fn(*args)`` here, errors mapped and the call counted as ``off_loop`` does: for work
    that cannot block (a small index already built), which a thread hop would only slow."""
    operation = getattr(fn, "__name__", "call")
    try:
        value = fn(*args)
    except RookhavenError as exc:
        MCP_CALLS.labels(operation, _outcome(exc)).inc()
        raise mapped(exc) from exc
    MCP_CALLS.labels(operation, "ok").inc()
    return value


def _outcome(exc: RookhavenError) -> str:
    if isinstance(exc, InputError):
        return "input-error"
    if isinstance(exc, StoreUnavailableError):
        return "store-unavailable"
    return "failed"
