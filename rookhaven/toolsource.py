"""A live MCP server's tool list, read as a client: a command started over stdio, or a URL.

The edge between ``rookhaven corpus add --from-mcp`` and a server: it initializes, pages
through ``tools/list`` with the SDK's client and returns ``{"tools": [...]}`` as the server
sent it, for ``toolcatalog`` to read like any published catalog. A server that does not
answer in time, refuses, or dies is one ``ToolSourceError`` naming it.
"""

from __future__ import annotations

import os
from typing import Any

import anyio
from mcp import Client, StdioServerParameters

from .errors import ToolSourceError

MAX_PAGES = 1000  # a server whose cursor never ends is refused, not followed forever


def tool_list(target: list[str], timeout: float) -> dict[str, Any]:
    """Every tool ``target`` lists (a command and its arguments, or one http(s) URL)."""
    shown = " ".join(target)
    try:
        return anyio.run(_list, target, timeout)
    except TimeoutError:
        raise ToolSourceError(f"the MCP server {shown} did not list its tools within "
                              f"{timeout:g} s (--timeout)") from None
    except ToolSourceError:
        raise
    except Exception as exc:  # the SDK's and the transport's errors alike
        leaf = _leaf(exc)
        if isinstance(leaf, TimeoutError):
            raise ToolSourceError(f"the MCP server {shown} did not list its tools within "
                                  f"{timeout:g} s (--timeout)") from None
        reason = " ".join(str(leaf).split()) or type(leaf).__name__
        raise ToolSourceError(f"could not list the tools of the MCP server {shown}: "
                              f"{type(leaf).__name__}: {reason[:300]}") from None


def _leaf(exc: BaseException) -> BaseException:
    """The first error inside task groups' exception groups: the one that says why."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


async def _list(target: list[str], timeout: float) -> dict[str, Any]:
    where: Any
    if len(target) == 1 and target[0].startswith(("http://", "https://")):
        where = target[0]
    else:
        where = StdioServerParameters(command=target[0], args=target[1:], env=dict(os.environ))
    tools: list[dict[str, Any]] = []
    with anyio.fail_after(timeout):
        async with Client(where) as client:
            cursor: str | None = None
            for _ in range(MAX_PAGES):
                page = await client.list_tools(cursor=cursor)
                tools += [t.model_dump(mode="json", by_alias=True, exclude_none=True)
                          for t in page.tools]
                cursor = page.next_cursor
                if not cursor:
                    return {"tools": tools}
    raise ToolSourceError(f"the MCP server {' '.join(target)} gave more than {MAX_PAGES} "
                          "pages of tools; its cursor never ends")
