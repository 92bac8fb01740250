"""The SDK's own floor for bench/mcp_calls.py: a minimal MCP server on the same SDK whose
one tool takes ``retrieve``'s arguments and answers at once, over stdio or streamable HTTP.

    python bench/mcp_floor.py [--http --port P]
"""

from __future__ import annotations

import argparse

from mcp.server.mcpserver import MCPServer

# Rookhaven's server logs at ROOKHAVEN_LOG_LEVEL (info) in JSON; the SDK's per-request lines
# are below that, so the floor keeps them off too.
server = MCPServer("floor", log_level="WARNING")


@server.tool()
def retrieve(query: str, recallBudget: int = 10, seed: str = "") -> dict[str, object]:
    """Answer with the arguments: no ranking, no store, nothing else."""
    return {"query": query, "recall_budget": recallBudget, "seed": seed}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--http", action="store_true")
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args()
    if args.http:
        server.run("streamable-http", host="127.0.0.1", port=args.port)
    else:
        server.run("stdio")


if __name__ == "__main__":
    main()
