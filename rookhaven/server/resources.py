"""MCP resources: stored results, audits, corpora and run reports, read by URI template and
listed page by page.

- ``rookhaven://results/{key}``: a stored result's canonical bytes (hits and audit)
- ``rookhaven://audits/{key}``: its audit record
- ``rookhaven://corpora/{ref}``: a corpus (name, ``name@version``, ``latest`` or digest) as
  canonical JSON lines, one document a line
- ``rookhaven://runs/{run_id}/report``: a finished run's full report

``resources/list`` lists the corpora, then every stored result and its audit (oldest first),
PAGE entries at a time behind an opaque cursor.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Callable
from typing import Any, cast

from mcp.server.context import ServerRequestContext
from mcp.server.mcpserver import Context, MCPServer
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, ListResourcesResult, PaginatedRequestParams, Resource

from ..core.canonical import canonical_bytes
from ..core.identity import RESULT_KEY_PATTERN
from ..errors import shown
from .arguments import clean_prose
from .errors import off_loop, resource_error
from .tools import State, state_of

PAGE = 100
JSON = "application/json"
JSON_LINES = "application/jsonl"


def _key(key: str) -> str:
    if not re.fullmatch(RESULT_KEY_PATTERN.strip("^$"), key):
        raise MCPError(INVALID_PARAMS, f"{shown(key, 80)} is not a result key: a key is "
                                       "sha256: and 64 lowercase hex digits")
    return key


async def _read(fn: Callable[..., Any], *args: object) -> Any:
    return await off_loop(fn, *args, mapped=resource_error)


async def result(key: str, ctx: Context) -> str:
    """A stored result's canonical bytes: hits and audit, exactly as stored and replayed."""
    stored = await _read(state_of(ctx).backend.result, _key(key))
    return canonical_bytes(stored).decode()


async def audit(key: str, ctx: Context) -> str:
    """A stored result's audit record: seed, subqueries, budgets, corpus and engine."""
    return canonical_bytes(await _read(state_of(ctx).backend.audit, _key(key))).decode()


async def corpus(ref: str, ctx: Context) -> str:
    """A corpus as canonical JSON lines, one document a line, in id order."""
    return (await _read(state_of(ctx).backend.corpus, ref)).lines.decode()  # type: ignore[no-any-return]


async def report(run_id: str, ctx: Context) -> str:
    """A finished run's full report: a verification's record (JSON) or a re-ranking's rows
    (JSON lines, in query order)."""
    return (await _read(state_of(ctx).backend.report, run_id)).decode()  # type: ignore[no-any-return]


TEMPLATES: tuple[tuple[str, str, str, Callable[..., Any]], ...] = (
    ("rookhaven://results/{key}", "result", JSON, result),
    ("rookhaven://audits/{key}", "audit", JSON, audit),
    ("rookhaven://corpora/{ref}", "corpus", JSON_LINES, corpus),
    ("rookhaven://runs/{run_id}/report", "run report", JSON, report),
)


def _cursor(offset: int) -> str:
    return base64.urlsafe_b64encode(f"o{offset}".encode()).decode()


def _offset(cursor: str | None) -> int:
    if cursor is None:
        return 0
    try:
        text = base64.urlsafe_b64decode(cursor.encode()).decode()
        if text.startswith("o") and text[1:].isascii() and text[1:].isdigit():
            return int(text[1:])
    except (ValueError, UnicodeError):
        pass
    raise MCPError(INVALID_PARAMS, "invalid cursor: pass the nextCursor of an earlier "
                                   "resources/list answer, or none for the first page")


def _stored(key: str) -> list[Resource]:
    return [Resource(uri=f"rookhaven://results/{key}", name=f"result {key}", mime_type=JSON),
            Resource(uri=f"rookhaven://audits/{key}", name=f"audit {key}", mime_type=JSON)]


def _listing(state: State, offset: int) -> tuple[list[Resource], bool]:
    """Up to PAGE resources from position ``offset`` of the listing, and whether more follow:
    the corpora first, then each stored result and its audit."""
    listed = state.backend.corpora()
    corpora = [Resource(uri=f"rookhaven://corpora/{info.digest or info.name}", name=info.name,
                        mime_type=JSON_LINES, description=f"corpus {info.name}: "
                        f"{info.documents} documents ({info.source})")
               for info in listed.corpora]
    entries = corpora[offset: offset + PAGE]
    more = offset + PAGE < len(corpora)
    need = PAGE - len(entries)
    if need and listed.pipeline:
        start = max(0, offset - len(corpora))  # position among results and audits
        first = start // 2
        pairs = [r for key in state.backend.result_keys(first, need // 2 + 2)
                 for r in _stored(key)]
        skip = start - 2 * first
        entries += pairs[skip: skip + need]
        more = len(pairs) > skip + need
    return entries, more


async def list_resources(ctx: ServerRequestContext[Any],
                         params: PaginatedRequestParams) -> ListResourcesResult:
    """``resources/list``: one page, with the cursor of the next when there is one."""
    state = cast(State, ctx.lifespan_context)
    offset = _offset(params.cursor)
    entries, more = await off_loop(_listing, state, offset, mapped=resource_error)
    return ListResourcesResult(resources=entries,
                               next_cursor=_cursor(offset + len(entries)) if more else None)


def register(server: MCPServer[State]) -> None:
    """Add the resource templates and the paged listing to ``server``."""
    for uri, name, mime, fn in TEMPLATES:
        server.resource(uri, name=name, mime_type=mime,
                        description=clean_prose(fn.__doc__ or ""))(fn)
    server._lowlevel_server.add_request_handler(  # the SDK lists only static resources
        "resources/list", PaginatedRequestParams, list_resources)
