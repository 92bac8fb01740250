"""`rookhaven mcp --http`: loopback serves without a token, a public bind without one is
refused before anything listens, and with a token set every request must carry it."""

from __future__ import annotations

import http.client
import json
import os
import re
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.conftest import free_port, wait_until
from tests.mcp_support import INITIALIZE_PARAMS, http_client, server_env, write_corpus

pytestmark = pytest.mark.anyio
TOKEN = "s3cret-test-token"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _listening(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(0.2)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def _serve(corpus: Path, port: int, **env: str) -> subprocess.Popen[bytes]:
    # stderr to a file, not a pipe nobody reads: a full pipe would stall the server.
    log = (corpus.parent / f"server-{port}.log").open("wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "rookhaven.cli.main", "mcp", "--http", "--port", str(port)],
        env=server_env(corpus, **env), stdout=log, stderr=log,
    )
    log.close()
    wait_until(lambda: _listening(port) or proc.poll() is not None, 30, what=f"port {port}")
    assert proc.poll() is None, (corpus.parent / f"server-{port}.log").read_text()
    return proc


def _stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=15)


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    return write_corpus(tmp_path)


@pytest.fixture
def open_server(corpus: Path) -> Iterator[str]:
    """URL of a running loopback server without a token; its log is server-PORT.log."""
    port = free_port()
    proc = _serve(corpus, port)
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        _stop(proc)


@pytest.fixture
def guarded_server(corpus: Path) -> Iterator[str]:
    port = free_port()
    proc = _serve(corpus, port, ROOKHAVEN_MCP_TOKEN=TOKEN)
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        _stop(proc)


async def test_loopback_without_a_token_serves_retrieve(open_server: str) -> None:
    async with Client(open_server) as client:
        result = await client.call_tool("retrieve", {"query": "crane faults", "recallBudget": 2})
    assert not result.is_error
    assert result.structured_content is not None
    assert len(result.structured_content["hits"]) == 2


def test_a_public_bind_without_a_token_refuses_to_start(corpus: Path) -> None:
    port = free_port()
    done = subprocess.run(
        [sys.executable, "-m", "rookhaven.cli.main", "mcp", "--http", "--host", "0.0.0.0",
         "--port", str(port)],
        env=server_env(corpus), capture_output=True, timeout=60,
    )
    assert done.returncode == 2
    assert b"refusing to serve MCP on 0.0.0.0" in done.stderr
    assert b"ROOKHAVEN_MCP_TOKEN" in done.stderr
    assert b"Traceback" not in done.stderr
    assert not _listening(port)


@pytest.mark.parametrize("authorization", [None, "Bearer wrong-token", f"Basic {TOKEN}", TOKEN])
async def test_with_a_token_requests_lacking_it_get_401(
        guarded_server: str, authorization: str | None) -> None:
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    if authorization is not None:
        headers["authorization"] = authorization
    async with httpx2.AsyncClient() as http:
        response = await http.post(guarded_server, headers=headers, json={
            "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INITIALIZE_PARAMS})
    assert response.status_code == 401
    assert response.headers["www-authenticate"].startswith("Bearer")
    assert TOKEN not in response.text


@pytest.mark.parametrize("scheme", ["Bearer", "bearer", "BEARER"])
async def test_with_a_token_a_client_sending_it_is_served(guarded_server: str,
                                                          scheme: str) -> None:
    # The scheme's name is case-insensitive (RFC 9110, 11.1).
    http = http_client(f"{scheme} {TOKEN}")
    async with http, Client(streamable_http_client(guarded_server, http_client=http)) as client:
        result = await client.call_tool("list_corpora", {})
    assert not result.is_error


async def test_the_http_server_logs_json_lines_only(open_server: str, corpus: Path) -> None:
    async with Client(open_server) as client:
        await client.call_tool("list_corpora", {})
    port = open_server.split(":")[2].split("/")[0]
    lines = (corpus.parent / f"server-{port}.log").read_text().splitlines()
    entries = [json.loads(line) for line in lines]
    assert any(e["msg"] == "serving MCP over streamable HTTP" for e in entries)
    assert any(e["logger"] == "uvicorn.access" for e in entries)
    assert not any("color_message" in e for e in entries)


def test_a_half_sent_request_is_dropped_after_the_read_timeout(corpus: Path) -> None:
    port = free_port()
    proc = _serve(corpus, port, ROOKHAVEN_MCP_READ_TIMEOUT="1")
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            started = time.monotonic()
            sock.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n")
            assert sock.recv(1024) == b""  # closed by the server, not by our 10 s timeout
            assert time.monotonic() - started < 5
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            sock.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n"
                         b"{\"jsonrpc\"")  # headers whole, the body never finished
            assert sock.recv(1024) == b""
    finally:
        _stop(proc)


def _post(url: str, body: bytes, headers: dict[str, str]) -> tuple[int, dict[str, str], str]:
    request = urllib.request.Request(url, data=body, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=30) as reply:
            return reply.status, dict(reply.headers), reply.read().decode()
    except urllib.error.HTTPError as refused:
        return refused.code, dict(refused.headers), refused.read().decode()


def _initialized(url: str) -> tuple[dict[str, str], str | None]:
    """The headers of a raw client after initialize, and its session id (if one)."""
    headers = {"Accept": "application/json, text/event-stream",
               "Content-Type": "application/json", "MCP-Protocol-Version": "2025-06-18"}
    hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"}}}
    status, reply, _ = _post(url, json.dumps(hello).encode(), headers)
    assert status == 200
    return headers, {k.lower(): v for k, v in reply.items()}.get("mcp-session-id")


def test_json_the_sdk_cannot_parse_is_answered_under_its_own_id(open_server: str) -> None:
    headers, session = _initialized(open_server)
    if session:
        headers["mcp-session-id"] = session
    deep = (b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":' + b"[" * 50_000
            + b"]" * 50_000 + b"}")
    surrogate = (b'{"jsonrpc":"2.0","id":"s8","method":"tools/call","params":{"name":'
                 b'"retrieve","arguments":{"query":"\\ud800"}}}')
    for body, wanted in ((deep, 7), (surrogate, "s8"), (b"not json", None)):
        status, _, text = _post(open_server, body, headers)
        answer = json.loads(text)
        assert status == 400 and answer["id"] == wanted, text
        assert answer["error"]["code"] == (-32700 if wanted is None else -32600)


def test_batches_ids_no_request_may_have_and_a_missing_session_get_their_own_errors(
        open_server: str) -> None:
    headers, session = _initialized(open_server)
    # No session header: the SDK's own reason, under the request's id, not a parse error.
    if session:
        status, _, text = _post(open_server, b'{"jsonrpc":"2.0","id":2,"method":"ping"}',
                                headers)
        answer = json.loads(text)
        assert status == 400 and answer["id"] == 2, text
        assert "session" in answer["error"]["message"].lower()
        assert "cannot read" not in answer["error"]["message"]
        headers["mcp-session-id"] = session
    cases = [(b'[{"jsonrpc":"2.0","id":1,"method":"ping"}]', "a batch (JSON array)"),
             (b'{"jsonrpc":"2.0","id":1.5,"method":"ping"}', "needs an id that is a string"),
             (b'{"jsonrpc":"2.0","id":null,"method":"ping"}', "needs an id that is a string"),
             (b'{"jsonrpc":"2.0","id":true,"method":"ping"}', "needs an id that is a string"),
             (b'{"jsonrpc":"2.0","method":"tools/list"}', "needs an id that is a string"),
             (b'{"jsonrpc":"2.0","id":3,"method":5}', "not a JSON-RPC 2.0 request")]
    for body, wanted in cases:
        status, _, text = _post(open_server, body, headers)
        answer = json.loads(text)
        assert status == 400 and answer["error"]["code"] == -32600, text
        assert wanted in answer["error"]["message"], text
        assert "pydantic" not in text and "validation error" not in text.lower(), text
        # JSON-RPC 2.0: an error whose request id could not be read carries "id": null.
        assert answer["jsonrpc"] == "2.0" and "id" in answer and answer["id"] in (None, 3), text
    # A well-formed request is still served.
    status, _, text = _post(open_server, b'{"jsonrpc":"2.0","id":9,"method":"ping"}', headers)
    assert status == 200 and '"id":9' in text.replace(" ", ""), text


@pytest.fixture
def scoped_server(corpus: Path) -> Iterator[tuple[str, Path, dict[str, str]]]:
    """A server taking the tokens of a file: one ``read`` token, one ``operate``."""
    tokens = corpus.parent / "tokens.json"
    secrets = {}
    for name, scopes in (("reader", "read"), ("operator", "read,operate")):
        made = subprocess.run([sys.executable, "-m", "rookhaven.cli.main", "token", "--file",
                               str(tokens), "add", name, "--scopes", scopes],
                              capture_output=True, text=True, check=True)
        secrets[name] = made.stdout.strip()
    port = free_port()
    proc = _serve(corpus, port, ROOKHAVEN_MCP_TOKENS_FILE=str(tokens))
    try:
        yield f"http://127.0.0.1:{port}/mcp", tokens, secrets
    finally:
        _stop(proc)


async def _call(url: str, secret: str, tool: str, arguments: dict[str, object]) -> Any:
    http = http_client(f"Bearer {secret}")
    async with http, Client(streamable_http_client(url, http_client=http)) as client:
        return await client.call_tool(tool, arguments)


async def test_a_read_token_may_retrieve_but_not_submit_nor_start_runs(
        scoped_server: tuple[str, Path, dict[str, str]]) -> None:
    url, _, secrets = scoped_server
    served = await _call(url, secrets["reader"], "retrieve", {"query": "crane faults"})
    assert not served.is_error
    for tool, arguments, scope in (
            ("submit_retrieval", {"query": "crane faults"}, "submit"),
            ("start_verification", {"all": True}, "operate"),
            ("start_rerank", {"toEngine": "bm25@4"}, "operate")):
        refused = await _call(url, secrets["reader"], tool, arguments)
        assert refused.is_error, tool
        text = refused.content[0].text  # type: ignore[union-attr]
        assert f"token 'reader' may not call {tool}: it needs the '{scope}' scope" in text
        assert secrets["reader"] not in text
    # The operator's token passes the scope check (and meets what the tool itself says).
    other = await _call(url, secrets["operator"], "start_verification", {"all": True})
    assert "may not call" not in other.content[0].text  # type: ignore[union-attr]


async def test_a_revoked_token_is_refused_at_its_next_request(
        scoped_server: tuple[str, Path, dict[str, str]]) -> None:
    url, tokens, secrets = scoped_server
    assert not (await _call(url, secrets["reader"], "list_corpora", {})).is_error
    subprocess.run([sys.executable, "-m", "rookhaven.cli.main", "token", "--file", str(tokens),
                    "revoke", "reader"], check=True)
    async with httpx2.AsyncClient() as http:
        response = await http.post(url, headers={
            "authorization": f"Bearer {secrets['reader']}", "content-type": "application/json",
            "accept": "application/json, text/event-stream"}, json={
            "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INITIALIZE_PARAMS})
    assert response.status_code == 401
    assert not (await _call(url, secrets["operator"], "list_corpora", {})).is_error


FLOOD, CAP = int(os.environ.get("ROOKHAVEN_TEST_SESSION_FLOOD", "12000")), 50


def _rss_mib(pid: int) -> float:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(r"VmRSS:\s+(\d+) kB", status).group(1)) / 1024  # type: ignore[union-attr]


def _flood(port: int, secret: str, count: int, threads: int = 16) -> Counter[int]:
    """``count`` initialize requests, each opening a session, from ``threads`` keep-alive
    connections: how many got each status (-429: a 429 without a Retry-After of a second or
    more)."""
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                       "params": INITIALIZE_PARAMS}).encode()
    headers = {"authorization": f"Bearer {secret}", "content-type": "application/json",
               "accept": "application/json, text/event-stream"}
    statuses: Counter[int] = Counter()

    def worker(share: int) -> None:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        for _ in range(share):
            connection.request("POST", "/mcp", body=body, headers=headers)
            reply = connection.getresponse()
            reply.read()
            waits = int(reply.getheader("retry-after", "0"))
            statuses[reply.status if reply.status != 429 or waits >= 1 else -429] += 1
        connection.close()

    pool = [threading.Thread(target=worker, args=(count // threads,)) for _ in range(threads)]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join()
    return statuses


@pytest.mark.slow
async def test_one_token_opening_sessions_by_the_thousand_crowds_out_no_other(
        corpus: Path) -> None:
    tokens = corpus.parent / "tokens.json"
    secrets = {}
    for name in ("flooder", "neighbour"):
        made = subprocess.run([sys.executable, "-m", "rookhaven.cli.main", "token", "--file",
                               str(tokens), "add", name, "--scopes", "read"],
                              capture_output=True, text=True, check=True)
        secrets[name] = made.stdout.strip()
    port = free_port()
    proc = _serve(corpus, port, ROOKHAVEN_MCP_TOKENS_FILE=str(tokens),
                  ROOKHAVEN_MCP_SESSIONS_PER_TOKEN=str(CAP))
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        assert not (await _call(url, secrets["neighbour"], "retrieve", {"query": "crane"})).is_error
        before = _rss_mib(proc.pid)
        results: list[Counter[int]] = []
        flood = threading.Thread(target=lambda: results.append(
            _flood(port, secrets["flooder"], FLOOD)))
        flood.start()
        during = await _call(url, secrets["neighbour"], "retrieve", {"query": "tide"})
        assert flood.is_alive(), "the flood ended before the neighbour's call: raise FLOOD"
        flood.join()
        # Measured before the neighbour's next call, whose ranking may load the compiled
        # kernels (about 100 MiB, the flood's or not).
        grown = _rss_mib(proc.pid) - before
        assert not during.is_error
        (statuses,) = results
        assert statuses[200] == CAP and statuses[429] == FLOOD - CAP, statuses
        assert not (await _call(url, secrets["neighbour"], "retrieve", {"query": "berth"})).is_error
        assert grown < 64, f"the server grew {grown:.0f} MiB under the flood"
        print(f"\n{FLOOD} initializes from one token: {statuses[200]} sessions, "
              f"{statuses[429]} refused with 429; the server grew {grown:.1f} MiB")
    finally:
        _stop(proc)
