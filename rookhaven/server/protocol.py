"""Protocol errors that say what to fix: the SDK's bare -32602s, given their reason.

The SDK answers every request whose params fail its schema, and every request sent before
``initialize``, with -32602 "Invalid request parameters" and nothing else (it keeps pydantic's
text off the wire, as that text may quote the input). A client then cannot tell a missing
field from a wrong type from a skipped handshake. This middleware, on both transports, keeps
the code and the id and puts the reason in the message: each failing field's path and what
it should be, never the value sent; or that the session is not initialized yet. A path part
that is not a field's name (a key the client chose, in a free-form object) shows as
``<key>``: the message must not carry what the client sent, nor grow with it.
"""

from __future__ import annotations

import re
from typing import Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.lowlevel.server import RequestHandler
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, PaginatedRequestParams
from pydantic import ValidationError

# How many failing fields a message names (the rest are counted).
SHOWN = 3
# What a field's name looks like (MCP's are camelCase identifiers); any other path part is a
# key the client chose.
FIELD_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,39}")


def _path(loc: tuple[int | str, ...]) -> str:
    return ".".join(str(part) if isinstance(part, int) or FIELD_NAME.fullmatch(part)
                    else "<key>" for part in loc) or "params"


def invalid_params(method: str, exc: ValidationError) -> MCPError:
    """-32602 naming each failing field of ``method``'s params and what it should be."""
    errors = exc.errors(include_url=False, include_input=False)
    reasons = [f"{_path(e['loc'])}: {e['msg']}" for e in errors[:SHOWN]]
    more = f" (and {len(errors) - SHOWN} more)" if len(errors) > SHOWN else ""
    return MCPError(code=INVALID_PARAMS, data="",
                    message=f"Invalid params for {method}: {'; '.join(reasons)}{more}")


async def explain_invalid_params(ctx: ServerRequestContext[Any, Any],
                                 call_next: CallNext) -> HandlerResult:
    """Server middleware: the SDK's -32602 answers, with their reason."""
    try:
        return await call_next(ctx)
    except ValidationError as exc:
        raise invalid_params(ctx.method, exc) from exc
    except MCPError as exc:
        # The handshake gate raises its bare -32602 itself (no pydantic error behind it).
        if (exc.error.code == INVALID_PARAMS and ctx.method != "initialize"
                and ctx.session.client_params is None and exc.__cause__ is None
                and exc.error.message == "Invalid request parameters"):
            raise MCPError(code=INVALID_PARAMS, data="", message=(
                f"Invalid request: {ctx.method} before the session is initialized; send "
                "initialize, then notifications/initialized, first")) from exc
        raise


def one_page(method: str, handler: RequestHandler[Any, Any]) -> RequestHandler[Any, Any]:
    """``handler`` of a list ``method`` answered in one page: a cursor can only be one an
    earlier answer gave, and none gives one, so any cursor is -32602 (as the spec asks of
    an invalid cursor) instead of the first page again."""
    async def answer(ctx: ServerRequestContext[Any, Any],
                     params: PaginatedRequestParams | None) -> Any:
        if params is not None and params.cursor is not None:
            raise MCPError(code=INVALID_PARAMS, data="", message=(
                f"invalid cursor: {method} answers in one page and gives no nextCursor; "
                "send it without a cursor"))
        return await handler(ctx, params)
    return answer
