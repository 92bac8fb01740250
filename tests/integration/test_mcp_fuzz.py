"""Fuzzing `rookhaven mcp` over stdio: hundreds of malformed lines and wrong-typed tool
arguments, each followed by a probe that must be answered; then a valid call must succeed.

One child serves the whole module, so a crash or a wedged loop anywhere shows up as a
missing answer (every read has a bounded wait).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.mcp_support import StdioSession, server_env, write_corpus

TOOLS = ["retrieve", "submit_retrieval", "get_job", "get_result", "get_audit",
         "verify_result", "list_corpora", "start_verification", "start_rerank", "get_run"]
ARGUMENT_NAMES = ["query", "recallBudget", "seed", "corpus", "decompose", "jobId", "resultKey",
                  "all", "sample", "keys", "since", "toEngine", "runId", "wait"]

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False)
    | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                max_size=4),
    max_leaves=10,
)

# Lines that are not a JSON-RPC message: free text, JSON of the wrong shape, and messages
# with one part wrong.
free_text = st.text(max_size=200).map(lambda s: s.replace("\n", " "))
wrong_json = json_values.map(json.dumps)
broken_message = st.fixed_dictionaries({
    "jsonrpc": st.sampled_from(["2.0", "1.0", 2, None]),
    "id": json_values,
    "method": st.sampled_from(["tools/call", "tools/list", "", "initialize"]) | json_values,
    "params": json_values,
}).map(json.dumps)
malformed_lines = st.one_of(free_text, wrong_json, broken_message)

arguments = st.dictionaries(st.sampled_from(ARGUMENT_NAMES) | st.text(max_size=10),
                            json_values, max_size=5)


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StdioSession]:
    corpus = write_corpus(tmp_path_factory.mktemp("fuzz"))
    child = StdioSession(server_env(corpus), timeout=30)
    try:
        child.initialize()
        yield child
    finally:
        child.close()


_probes = itertools.count()


def still_serving(session: StdioSession) -> None:
    """A ping with an id no fuzzed line uses must be answered; every line before it must be
    a JSON-RPC 2.0 message (StdioSession.read checks each one is a JSON object)."""
    probe = f"probe-{next(_probes)}"
    session.send({"jsonrpc": "2.0", "id": probe, "method": "ping"})
    while True:
        message = session.read()
        assert message.get("jsonrpc") == "2.0", message
        if message.get("id") == probe:
            assert message["result"] == {}
            return


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(line=malformed_lines)
def test_malformed_lines_never_stop_the_server(session: StdioSession, line: str) -> None:
    session.send_raw(line.encode("utf-8", errors="surrogatepass"))
    still_serving(session)


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tool=st.sampled_from(TOOLS) | st.text(max_size=12), args=arguments)
def test_wrong_typed_arguments_are_answered_not_fatal(
        session: StdioSession, tool: str, args: dict[str, Any]) -> None:
    answer = session.request("tools/call", {"name": tool, "arguments": args})
    # Either a tool result (success or isError) or a JSON-RPC error: never silence.
    assert ("result" in answer) != ("error" in answer), answer
    if "result" in answer and answer["result"].get("isError"):
        assert "Traceback" not in answer["result"]["content"][0]["text"]


def test_after_the_fuzzing_a_valid_call_still_succeeds(session: StdioSession) -> None:
    answer = session.request("tools/call", {"name": "retrieve", "arguments": {
        "query": "crane faults and tide windows", "recallBudget": 3, "seed": "after-fuzz"}})
    assert answer["result"].get("isError") is not True
    assert len(answer["result"]["structuredContent"]["hits"]) == 3
    assert session.proc.poll() is None
