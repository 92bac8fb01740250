"""`rookhaven mcp` over stdio, as a client launches it: a child process spoken to in lines.

Also pins the SDK's behaviour on a bare ``initialize`` (no params), which the reference
server's README shows: the SDK refuses it with -32602, and the session stays usable; and the
reasons Rookhaven adds to the SDK's bare -32602s (server/protocol.py).
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import free_port
from tests.mcp_support import INITIALIZE_PARAMS, StdioSession, server_env, write_corpus

RETRIEVE = {"name": "retrieve", "arguments": {"query": "crane faults and tide windows",
                                              "recallBudget": 3, "seed": "run-1"}}


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    return write_corpus(tmp_path)


@pytest.fixture
def session(corpus: Path) -> Iterator[StdioSession]:
    child = StdioSession(server_env(corpus))
    try:
        yield child
    finally:
        child.close()


def test_a_conforming_session_initializes_and_retrieves(session: StdioSession) -> None:
    init = session.initialize()
    assert init["jsonrpc"] == "2.0"
    assert init["result"]["serverInfo"]["name"] == "rookhaven"
    assert init["result"]["protocolVersion"] == INITIALIZE_PARAMS["protocolVersion"]
    assert "tools" in init["result"]["capabilities"]
    call = session.request("tools/call", RETRIEVE)
    result = call["result"]
    assert result.get("isError") is not True
    structured = result["structuredContent"]
    assert [h["rank"] for h in structured["hits"]] == [1, 2, 3]
    assert structured["metadata"]["mode"] == "inline"
    assert json.loads(result["content"][0]["text"]) == structured
    listed = session.request("tools/list")
    assert len(listed["result"]["tools"]) == 11  # ten tools and search_tools


def test_stdout_carries_only_protocol_and_stderr_only_json_log_lines(corpus: Path) -> None:
    session = StdioSession(server_env(corpus, ROOKHAVEN_LOG_LEVEL="debug"))
    try:
        session.initialize()
        session.request("tools/call", RETRIEVE)
        session.request("tools/call", {"name": "retrieve", "arguments": {"query": 1}})
    finally:
        assert session.close() == 0
    assert session._lines.get(timeout=5) is None  # nothing but the answers read above
    assert session.stderr, "debug logging should have written something"
    for line in session.stderr:
        assert isinstance(json.loads(line), dict), line


def test_a_bare_initialize_is_refused_by_the_sdk_and_the_session_goes_on(
        session: StdioSession) -> None:
    early = session.request("tools/list")
    assert early["error"] == {"code": -32602, "data": "", "message": (
        "Invalid request: tools/list before the session is initialized; send initialize, "
        "then notifications/initialized, first")}
    bare = session.request("initialize")
    assert bare["error"]["code"] == -32602  # the SDK's code; the reason is ours
    assert bare["error"]["message"] == "Invalid params for initialize: params: Field required"
    assert session.initialize()["result"]["serverInfo"]["name"] == "rookhaven"
    assert "result" in session.request("tools/call", RETRIEVE)


@pytest.mark.parametrize(("method", "params", "reason"), [
    ("tools/call", {"name": "retrieve", "arguments": []},
     "Invalid params for tools/call: params.arguments: Input should be a valid dictionary"),
    ("tools/call", {"arguments": {}}, "Invalid params for tools/call: params.name: Field required"),
    ("logging/setLevel", {"level": "loud"}, "Invalid params for logging/setLevel: params.level: "
     "Input should be 'alert', 'critical', 'debug', 'emergency', 'error', 'info', 'notice' or "
     "'warning'"),
    ("resources/read", {"uri": 5},
     "Invalid params for resources/read: params.uri: Input should be a valid string"),
])
def test_params_the_protocol_refuses_are_answered_with_the_field_and_what_it_should_be(
        session: StdioSession, method: str, params: dict[str, object], reason: str) -> None:
    session.initialize()
    answer = session.request(method, params)
    assert answer["error"] == {"code": -32602, "message": reason, "data": ""}
    assert "result" in session.request("tools/call", RETRIEVE)


def test_unreadable_lines_get_json_rpc_errors_and_serving_continues(
        session: StdioSession) -> None:
    session.initialize()
    session.send_raw(b"   ")  # a blank line is no message, and gets no answer
    session.send_raw(b"this is not json")
    assert session.read() == {"jsonrpc": "2.0", "id": None, "error": {
        "code": -32700, "message": "Parse error: not valid JSON"}}
    session.send_raw(b'{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": [1]}')
    invalid = session.read()
    assert invalid["id"] == 7 and invalid["error"]["code"] == -32600
    assert session.request("no/such/method")["error"]["code"] == -32601
    assert "result" in session.request("tools/call", RETRIEVE)


def test_a_line_that_is_not_utf8_is_refused_under_its_id_not_served_with_replacements(
        session: StdioSession) -> None:
    session.initialize()
    call = {"jsonrpc": "2.0", "id": 8, "method": "tools/call",
            "params": {"name": "retrieve", "arguments": {"query": "@crane", "recallBudget": 2}}}
    line = json.dumps(call).encode()
    session.send_raw(line.replace(b"@", b"\xff\xfe"))
    refused = session.read()
    assert refused["id"] == 8 and refused["error"]["code"] == -32600, refused
    assert "the line is not UTF-8 (byte 0xff at offset" in refused["error"]["message"]
    session.send_raw(b"\xc0\xaf")
    assert session.read()["error"]["code"] == -32700
    assert "result" in session.request("tools/call", RETRIEVE)


def test_a_piped_session_gets_every_answer_before_the_server_exits(corpus: Path) -> None:
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INITIALIZE_PARAMS},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        *({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": RETRIEVE}
          for i in range(2, 12)),
    ]
    stdin = "".join(json.dumps(m) + "\n" for m in lines).encode()
    done = subprocess.run([sys.executable, "-m", "rookhaven.cli.main", "mcp"], input=stdin,
                          capture_output=True, env=server_env(corpus), timeout=60, check=True)
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert sorted(a["id"] for a in answers) == list(range(1, 12))
    assert all("result" in a for a in answers)


def test_two_requests_in_flight_under_one_id_at_end_of_input_both_get_answers(
        corpus: Path) -> None:
    # MCP forbids reusing an id in flight, but every request read gets its answer.
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INITIALIZE_PARAMS},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": RETRIEVE},
        {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": RETRIEVE},
    ]
    stdin = "".join(json.dumps(m) + "\n" for m in lines).encode()
    done = subprocess.run([sys.executable, "-m", "rookhaven.cli.main", "mcp"], input=stdin,
                          capture_output=True, env=server_env(corpus), timeout=60, check=True)
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert [a["id"] for a in answers].count(7) == 2
    assert all("result" in a for a in answers), answers


def test_with_redis_configured_but_down_tools_say_so_and_the_server_keeps_serving(
        corpus: Path) -> None:
    dead = f"redis://127.0.0.1:{free_port()}/0"
    session = StdioSession(server_env(corpus, ROOKHAVEN_REDIS_URL=dead,
                                      ROOKHAVEN_REDIS_TIMEOUT="0.5"))
    try:
        session.initialize()
        for tool, arguments in [("retrieve", RETRIEVE["arguments"]),
                                ("get_job", {"jobId": "sha256:" + "0" * 64})]:
            result = session.request("tools/call", {"name": tool, "arguments": arguments})
            assert result["result"]["isError"] is True
            text = result["result"]["content"][0]["text"]
            assert "store unavailable" in text and "Traceback" not in text
        assert session.request("ping")["result"] == {}
    finally:
        assert session.close() == 0
