"""The ``search_tools`` tool: rank a tool catalog for an agent and hand back the tools found.

A catalog stored by ``corpus add --tools`` or ``--from-mcp`` keeps each tool's whole
definition in its document's metadata (``toolcatalog``). The search is a ``retrieve`` (the
same hits, audit and result key, so it replays like any retrieval); beside the result it
returns each hit's name, title, description and input schema, so a client can load the tool
it found. A corpus that is not a tool catalog is a tool error saying how to make one.
"""

from __future__ import annotations

from typing import Any

import orjson
from mcp.server.mcpserver import Context
from pydantic import BaseModel, ConfigDict, Field

from ..errors import InputError
from .errors import off_loop, tool_error
from .outputs import RetrieveOutput
from .tools import (
    CorpusRef,
    Decompose,
    EngineRef,
    Query,
    RecallBudget,
    Seed,
    retrieve,
    state_of,
)

CATALOGS = 8  # tool catalogs (by digest) a server keeps read


class FoundTool(BaseModel):
    """A tool a search found, as its server defined it: enough to load and call it."""

    model_config = ConfigDict(populate_by_name=True)

    name: str
    title: str | None = None
    description: str = ""
    input_schema: dict[str, Any] = Field(alias="inputSchema", default_factory=dict)


class ToolSearchOutput(RetrieveOutput):
    """``retrieve``'s output for a tool catalog, with each hit's tool beside the result."""

    tools: list[FoundTool] = Field(description="the tool behind each hit, in rank order")


def _catalog(lines: bytes, corpus: str) -> dict[str, Any]:
    """Each document's tool definition by id; an InputError if the corpus holds none."""
    tools = {}
    for line in lines.splitlines():
        document = orjson.loads(line)
        tool = (document.get("metadata") or {}).get("tool")
        if isinstance(tool, dict):
            tools[document["id"]] = tool
    if not tools:
        raise InputError(f"corpus {corpus} is not a tool catalog: store one with `rookhaven "
                         "corpus add --tools FILE` or `--from-mcp COMMAND...`")
    return tools


async def search_tools(
    ctx: Context, query: Query, recallBudget: RecallBudget = None,
    seed: Seed = None, corpus: CorpusRef = None, decompose: Decompose = True,
    engine: EngineRef = None,
) -> ToolSearchOutput:
    """Find the tools of a stored tool catalog that fit a request, best first: the same
    hits, audit and ``result_key`` as ``retrieve``, and in ``tools`` each hit's name,
    title, description and input schema, ready to load."""
    found = await retrieve(ctx, query, recallBudget, seed, corpus, decompose, engine)
    digest = found.audit.corpus_digest
    catalogs = state_of(ctx).catalogs
    tools = catalogs.get(digest)
    if tools is None:
        data = await off_loop(state_of(ctx).backend.corpus, digest)
        try:
            tools = _catalog(data.lines, corpus or data.name)
        except InputError as exc:
            raise tool_error(exc) from None
        catalogs[digest] = tools
        while len(catalogs) > CATALOGS:
            catalogs.popitem(last=False)
    else:
        catalogs.move_to_end(digest)
    picked = [tools.get(hit.id, {"name": hit.id}) for hit in found.hits]
    return ToolSearchOutput(
        hits=found.hits, audit=found.audit, result_key=found.result_key,
        metadata=found.metadata,
        tools=[FoundTool(name=t.get("name", ""), title=t.get("title"),
                         description=t.get("description") or "",
                         input_schema=t.get("inputSchema") or {}) for t in picked])
