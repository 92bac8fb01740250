"""Call rates of the MCP front end: in-process, stdio and streamable HTTP, over one corpus.

    python bench/mcp_calls.py [--calls N] [--corpus FILE | --documents N]

Each transport makes N sequential ``retrieve`` calls (the query varies, so nothing is
cached) after a warm-up call, and prints calls/s. Over stdio and HTTP the same client also
calls the SDK's floor (``bench/mcp_floor.py``: a minimal server on the same SDK whose tool
takes the same arguments and answers at once), in the same run, and the ratio is printed.
The servers are children of this script and are stopped before it exits.
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
from collections.abc import Callable, Iterator
from contextlib import contextmanager
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


def measure(name: str, make: Callable[[], Client], calls: int) -> float:
    async def go() -> float:
        async with make() as client:
            return await rate(client, calls)
    found = anyio.run(go)
    print(f"{name:>22}: {found:8.0f} calls/s ({calls} retrieve calls)", flush=True)
    return found


@contextmanager
def http_server(command: list[str], env: dict[str, str]) -> Iterator[str]:
    """``command`` serving streamable HTTP on a free port (appended as --port): its URL."""
    port = free_port()
    server = subprocess.Popen([*command, "--http", "--port", str(port)], env=env,
                              stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while socket.socket().connect_ex(("127.0.0.1", port)) != 0:
            if time.monotonic() > deadline or server.poll() is not None:
                raise SystemExit(f"the HTTP server {command} did not start")
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        server.terminate()
        server.wait(timeout=15)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=500)
    parser.add_argument("--corpus", type=Path, help="corpus file (default: a synthetic one)")
    parser.add_argument("--documents", type=int, default=2000,
                        help="size of the synthetic corpus (documents)")
    parser.add_argument("--rounds", type=int, default=1,
                        help="alternate ours and the floor this many times")
    args = parser.parse_args()
    # Quiet the SDK's per-request INFO lines (the in-process server configures the root logger).
    logging.basicConfig(level=logging.WARNING)
    with tempfile.TemporaryDirectory() as tmp:
        corpus = args.corpus or sample_corpus(Path(tmp), args.documents)
        env = {k: v for k, v in os.environ.items() if not k.startswith("ROOKHAVEN_")}
        env["ROOKHAVEN_CORPUS_PATH"] = str(corpus)
        command = [sys.executable, "-m", "rookhaven.cli.main", "mcp"]
        floor = [sys.executable, str(Path(__file__).with_name("mcp_floor.py"))]
        measure("in-process", lambda: Client(build_server(Settings(corpus_path=corpus))),
                args.calls)
        for _ in range(args.rounds):
            ours = measure("stdio", lambda: Client(StdioServerParameters(
                command=command[0], args=command[1:], env=env)), args.calls)
            base = measure("stdio, SDK floor", lambda: Client(StdioServerParameters(
                command=floor[0], args=floor[1:], env=env)), args.calls)
            print(f"{'stdio ratio':>22}: {ours / base:8.2f}", flush=True)
            with http_server(command, env) as url:
                ours = measure("streamable HTTP", lambda u=url: Client(u), args.calls)
            with http_server(floor, env) as url:
                base = measure("HTTP, SDK floor", lambda u=url: Client(u), args.calls)
            print(f"{'HTTP ratio':>22}: {ours / base:8.2f}", flush=True)

if __name__ == "__main__":
    main()
