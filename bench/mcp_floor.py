"""The SDK's own floor for bench/mcp_calls.py: a minimal MCP server on the same SDK whose
one tool takes ``retrieve``'s arguments and answers at once, over stdio or streamable HTTP.

    python bench/mcp_floor.py [--http --port P] [--result FILE]

With ``--result``, the tool answers every call with that file's ``retrieve`` output (JSON,
as Rookhaven's ``retrieve`` returns it, under the same output model and schema): the SDK's
cost of carrying a result of Rookhaven's size, with no ranking and none of Rookhaven's code
around the call.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from mcp.server.mcpserver import MCPServer

from rookhaven.server.outputs import RetrieveOutput  # the published output model


def floor_server(result: Path | None) -> MCPServer:
    """The floor's server; its tool is async, as the SDK runs a sync one on a worker thread
    (~0.3 ms of CPU a call that no server needs to pay)."""
    # Rookhaven's server logs at ROOKHAVEN_LOG_LEVEL (info) in JSON; the SDK's per-request
    # lines are below that, so the floor keeps them off too.
    server = MCPServer("floor", log_level="WARNING")
    if result is None:
        @server.tool()
        async def retrieve(query: str, recallBudget: int = 10,
                           seed: str = "") -> dict[str, object]:
            """Answer with the arguments: no ranking, no store, nothing else."""
            return {"query": query, "recall_budget": recallBudget, "seed": seed}
        return server

    answer = RetrieveOutput.model_validate_json(result.read_bytes())

    @server.tool(name="retrieve")
    async def retrieve_sized(query: str, recallBudget: int = 10,
                             seed: str = "") -> RetrieveOutput:
        """Answer with the same stored result: no ranking, no store, nothing else."""
        return answer
    return server


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--http", action="store_true")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--result", type=Path, help="a retrieve output (JSON) to answer with")
    args = parser.parse_args()
    server = floor_server(args.result)
    if args.http:
        server.run("streamable-http", host="127.0.0.1", port=args.port)
    else:
        server.run("stdio")


if __name__ == "__main__":
    main()
