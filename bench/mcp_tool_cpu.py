"""CPU a `retrieve` tool call costs, client and server in one process, trees alternating.

Run by hand (not a test), from the repository root:

    python bench/mcp_tool_cpu.py --trees /work/old-tree,. [--corpus FILE] [--calls 500]

Each tree's ``rookhaven`` (a checkout, e.g. a ``git worktree`` of an older commit) is loaded
in turn into this process (as ``bench/overhead.py`` does) and serves the Python SDK's
in-memory client; after 300 warm-up calls each, the trees take turns at ``--calls`` calls
for ``--rounds`` rounds, and the best round's process CPU a call is printed. The client's
share (its output-schema check in Python, ~0.7 ms) is the same for every tree, so the
differences are the server's. Whole calls over stdio or HTTP (``bench/mcp_calls.py``)
swing by a third between runs on two shared cores; this does not.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from mcp import Client

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from mcp_calls import WORDS, sample_corpus, timed_calls  # noqa: E402
from overhead import _load  # noqa: E402


def server_of(tree: Path, corpus: Path) -> Any:
    """The MCP server of ``tree``'s rookhaven over ``corpus`` (inline, no services)."""
    _load(tree)
    config, server = (importlib.import_module(f"rookhaven.{m}") for m in ("config", "server"))
    return server.build_server(config.Settings(corpus_path=corpus))


async def measure(servers: list[tuple[str, Any]], calls: int, rounds: int) -> dict[str, float]:
    """Best round's CPU us a call per tree."""
    best = {tree: float("inf") for tree, _ in servers}
    clients: list[tuple[str, Client]] = []
    try:
        for tree, server in servers:
            client = Client(server)
            await client.__aenter__()
            clients.append((tree, client))
            for i in range(300):  # warm: the kernels loaded, the caches filled
                await client.call_tool("retrieve", {"query": WORDS[i % len(WORDS)],
                                                    "recallBudget": 10, "seed": f"w{i}"})
        for _ in range(rounds):
            for tree, client in clients:
                began = time.process_time()
                await timed_calls(client, calls)
                best[tree] = min(best[tree], (time.process_time() - began) / calls * 1e6)
    finally:
        for _, client in reversed(clients):  # cancel scopes close in the reverse order
            await client.__aexit__(None, None, None)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trees", default=str(ROOT))
    parser.add_argument("--corpus", type=Path, help="corpus file (default: bench/mcp_calls.py's "
                                                    "2,000 synthetic documents)")
    parser.add_argument("--calls", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)  # the in-process server's INFO lines off
    with tempfile.TemporaryDirectory() as tmp:
        corpus = args.corpus or sample_corpus(Path(tmp))
        servers = [(tree, server_of(Path(tree), corpus)) for tree in args.trees.split(",")]
        for tree, us in anyio.run(measure, servers, args.calls, args.rounds).items():
            print(f"{tree}: {us:.0f} us of CPU a retrieve call (client and server)")


if __name__ == "__main__":
    main()
