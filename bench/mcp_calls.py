"""Call rates of the MCP front end: in-process, stdio and streamable HTTP, over one corpus.

    python bench/mcp_calls.py [--calls N] [--corpus FILE | --documents N]

Each transport makes N sequential ``retrieve`` calls (the query varies, so nothing is
cached) after a warm-up call, and prints calls/s. The servers are children of this
script and are stopped before it exits.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters

from rookhaven.config import Settings
from rookhaven.server import build_server

WORDS = ["crane", "berth", "tide", "pilot", "reefer", "fault", "delay", "window", "schedule",
         "night", "power"]


def sample_corpus(directory: Path, size: int = 2000) -> Path:
    path = directory / "bench.jsonl"
    with path.open("w", encoding="utf-8") as out:
        for i in range(size):
            text = " ".join(WORDS[(i * k) % len(WORDS)] for k in range(1, 9))
            out.write(json.dumps({"id": f"d{i:05d}", "text": text}) + "\n")
    return path


async def rate(client: Client, calls: int) -> float:
    await client.call_tool("retrieve", {"query": "crane", "recallBudget": 10})
    started = time.perf_counter()
    for i in range(calls):
        query = f"{WORDS[i % len(WORDS)]} {WORDS[(i * 7) % len(WORDS)]}"
        result = await client.call_tool("retrieve", {"query": query, "recallBudget": 10,
                                                     "seed": str(i)})
        assert not result.is_error, result.content
    return calls / (time.perf_counter() - started)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def measure(name: str, make: Callable[[], Client], calls: int) -> None:
    async def go() -> float:
        async with make() as client:
            return await rate(client, calls)
    print(f"{name:>16}: {anyio.run(go):8.0f} calls/s ({calls} retrieve calls)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=500)
    parser.add_argument("--corpus", type=Path, help="corpus file (default: a synthetic one)")
    parser.add_argument("--documents", type=int, default=2000,
                        help="size of the synthetic corpus (documents)")
    args = parser.parse_args()
    # Quiet the SDK's per-request INFO lines (the in-process server configures the root logger).
    logging.basicConfig(level=logging.WARNING)
    with tempfile.TemporaryDirectory() as tmp:
        corpus = args.corpus or sample_corpus(Path(tmp), args.documents)
        env = {k: v for k, v in os.environ.items() if not k.startswith("ROOKHAVEN_")}
        env["ROOKHAVEN_CORPUS_PATH"] = str(corpus)
        command = [sys.executable, "-m", "rookhaven.cli.main", "mcp"]
        measure("in-process", lambda: Client(build_server(Settings(corpus_path=corpus))),
                args.calls)
        measure("stdio", lambda: Client(StdioServerParameters(
            command=command[0], args=command[1:], env=env)), args.calls)
        port = free_port()
        server = subprocess.Popen([*command, "--http", "--port", str(port)], env=env,
                                  stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 30
            while socket.socket().connect_ex(("127.0.0.1", port)) != 0:
                if time.monotonic() > deadline or server.poll() is not None:
                    raise SystemExit("the HTTP server did not start")
                time.sleep(0.05)
            measure("streamable HTTP", lambda: Client(f"http://127.0.0.1:{port}/mcp"),
                    args.calls)
        finally:
            server.terminate()
            server.wait(timeout=15)


if __name__ == "__main__":
    main()
