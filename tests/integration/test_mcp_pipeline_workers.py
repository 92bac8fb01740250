"""`rookhaven mcp` over a real Redis with real `celery worker` processes: retrieve goes
inline while no worker is alive and through the worker once one is, with the same bytes;
submit, poll and verify work end to end."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from rookhaven import RetrievalRequest, retrieve
from rookhaven.config import Settings
from tests.conftest import wait_until
from tests.integration.workerfarm import WorkerFarm, documents, pipeline
from tests.mcp_support import StdioSession

ARGS = {"query": "crane tide and pilot delay", "recallBudget": 5, "seed": "mcp-1",
        "corpus": "port"}


@pytest.fixture
def session(env: dict[str, str]) -> Iterator[StdioSession]:
    pipeline(env).add_corpus(documents(80), "port")
    child = StdioSession(env, timeout=60)
    try:
        child.initialize()
        yield child
    finally:
        child.close()


def call(session: StdioSession, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    answer = session.request("tools/call", {"name": tool, "arguments": arguments})
    result = answer["result"]
    assert result.get("isError") is not True, result["content"]
    structured: dict[str, Any] = result["structuredContent"]
    return structured


def test_retrieve_is_inline_without_workers_and_pipelined_with_one_same_bytes(
        session: StdioSession, workers: WorkerFarm) -> None:
    here = call(session, "retrieve", ARGS)
    assert here["metadata"]["mode"] == "inline"
    # Served here, so stored: the same request is then answered from the store.
    stored = call(session, "retrieve", ARGS)
    assert stored["metadata"]["reason"] == "result already stored"
    assert stored["result_key"] == here["result_key"]
    workers.start("mcp-w1", concurrency=1)
    other = ARGS | {"seed": "mcp-worker"}
    there = call(session, "retrieve", other)
    assert there["metadata"] == there["metadata"] | {"mode": "pipeline",
                                                     "reason": "a worker ranked it"}
    # Both are the inline core's bytes for their requests.
    for args, served in ((ARGS, here), (other, there)):
        request = RetrievalRequest(query=args["query"], recallBudget=args["recallBudget"],
                                   seed=args["seed"])
        core = retrieve(request, documents(80), Settings().engine).model_dump(mode="json")
        assert (served["hits"], served["audit"]) == (core["hits"], core["audit"])
    again = call(session, "retrieve", other)
    assert again["metadata"]["reason"] == "result already stored"


def test_submit_poll_fetch_and_verify_through_a_worker(
        session: StdioSession, workers: WorkerFarm) -> None:
    workers.start("mcp-w2", concurrency=1)
    job = call(session, "submit_retrieval", ARGS | {"seed": "mcp-2"})
    assert job["state"] in ("queued", "running", "done")
    done = wait_until(lambda: (s := call(session, "get_job", {"jobId": job["job_id"]}))
                      ["state"] == "done" and s, 30, what="the job to finish")
    assert done["attempts"] == 1 and done["error"] is None
    stored = call(session, "get_result", {"resultKey": job["result_key"]})
    assert stored["audit"]["seed"] == "mcp-2"
    verdict = call(session, "verify_result", {"resultKey": job["result_key"]})
    assert verdict["match"] is True
