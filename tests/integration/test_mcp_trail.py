"""Who asked, over `rookhaven mcp --http` with a real Redis and a real worker: each job and
run names the tokens that asked for it (never in the result's bytes), and a token past its
open jobs is refused while another token is served."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from rookhaven import RetrievalRequest, Retriever, canonical_bytes
from rookhaven.config import Settings
from tests.conftest import ROOT, free_port, wait_until
from tests.integration.workerfarm import WorkerFarm, documents, pipeline
from tests.mcp_support import http_client, server_env

pytestmark = pytest.mark.anyio
OPEN_JOBS = 3


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def served(env: dict[str, str], tmp_path: Path) -> Iterator[tuple[str, dict[str, str]]]:
    """The server's URL and two tokens' secrets: alpha (every scope), beta (read, submit)."""
    pipeline(env).add_corpus(documents(80), "port")
    tokens = tmp_path / "tokens.json"
    secrets = {}
    for name, scopes in (("alpha", "read,submit,operate"), ("beta", "read,submit")):
        secrets[name] = subprocess.run(
            [sys.executable, "-m", "rookhaven.cli.main", "token", "--file", str(tokens), "add",
             name, "--scopes", scopes], capture_output=True, text=True, check=True,
        ).stdout.strip()
    port = free_port()
    log = (tmp_path / "server.log").open("wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "rookhaven.cli.main", "mcp", "--http", "--port", str(port)],
        env=server_env(None, **env, ROOKHAVEN_MCP_TOKENS_FILE=str(tokens),
                       ROOKHAVEN_MCP_OPEN_JOBS_PER_TOKEN=str(OPEN_JOBS)),
        stdout=log, stderr=log)
    log.close()
    base = f"http://127.0.0.1:{port}"
    wait_until(lambda: proc.poll() is not None or _answers(base), 60, what="the MCP server")
    assert proc.poll() is None, (tmp_path / "server.log").read_text()
    try:
        yield base, secrets
    finally:
        proc.terminate()
        proc.wait(timeout=15)


def _answers(base: str) -> bool:
    port = int(base.rsplit(":", 1)[1])
    with socket.socket() as sock:
        sock.settimeout(0.2)
        return sock.connect_ex(("127.0.0.1", port)) == 0


async def _call(base: str, secret: str, tool: str, arguments: dict[str, Any]) -> Any:
    http = http_client(f"Bearer {secret}")
    async with http, Client(streamable_http_client(f"{base}/mcp", http_client=http)) as client:
        return await client.call_tool(tool, arguments)


async def _ok(base: str, secret: str, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    answer = await _call(base, secret, tool, arguments)
    assert not answer.is_error, answer.content
    structured: dict[str, Any] = answer.structured_content
    return structured


def _ask(n: int) -> dict[str, Any]:
    return {"query": f"crane tide pilot delay {n}", "recallBudget": 5, "seed": f"trail-{n}",
            "corpus": "port"}


async def test_each_job_and_run_names_who_asked_and_its_bytes_do_not(
        served: tuple[str, dict[str, str]], env: dict[str, str],
        workers: WorkerFarm) -> None:
    base, secrets = served
    first = await _ok(base, secrets["alpha"], "submit_retrieval", _ask(1))
    same = await _ok(base, secrets["beta"], "submit_retrieval", _ask(1))
    assert same["job_id"] == first["job_id"] == first["result_key"]  # one job, one key
    assert same["asked_by"] == ["alpha", "beta"]
    shown = subprocess.run([sys.executable, "-m", "rookhaven.cli.main", "job", first["job_id"]],
                           cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    assert json.loads(shown.stdout)["asked_by"] == ["alpha", "beta"]

    workers.start("trail-w1", concurrency=1)
    wait_until(lambda: pipeline(env).job(first["job_id"]).state == "done", 60,
               what="the job done by the worker")
    job = await _ok(base, secrets["beta"], "get_job", {"jobId": first["job_id"]})
    assert (job["state"], job["asked_by"]) == ("done", ["alpha", "beta"])
    stored = pipeline(env).result(first["result_key"])
    request = RetrievalRequest(query=_ask(1)["query"], recall_budget=5, seed="trail-1")
    assert stored == canonical_bytes(Retriever(documents(80), Settings().engine)
                                     .retrieve(request))
    assert b"alpha" not in stored and b"beta" not in stored

    started = await _ok(base, secrets["alpha"], "start_verification",
                        {"keys": [first["result_key"]]})
    assert started["asked_by"] == ["alpha"]
    run = await _ok(base, secrets["alpha"], "get_run", {"runId": started["run_id"], "wait": 60})
    assert (run["state"], run["asked_by"]) == ("done", ["alpha"])
    page = httpx2.get(f"{base}{run['page']}", timeout=30,
                      headers={"authorization": f"Bearer {secrets['alpha']}"})
    assert page.status_code == 200
    assert "MCP token <code>alpha</code>" in page.text


async def test_a_token_past_its_open_jobs_is_refused_and_no_other_token_is(
        served: tuple[str, dict[str, str]], env: dict[str, str],
        workers: WorkerFarm) -> None:
    base, secrets = served
    held = [await _ok(base, secrets["beta"], "submit_retrieval", _ask(n))
            for n in range(10, 10 + OPEN_JOBS)]
    refused = await _call(base, secrets["beta"], "submit_retrieval", _ask(99))
    assert refused.is_error
    text = refused.content[0].text
    assert f"token 'beta' has {OPEN_JOBS} jobs queued or running" in text
    assert "ROOKHAVEN_MCP_OPEN_JOBS_PER_TOKEN" in text and secrets["beta"] not in text
    # Another token is not crowded out (and the refused submission left no trace of beta);
    # nor is beta's own reading.
    other = await _ok(base, secrets["alpha"], "submit_retrieval", _ask(99))
    assert other["asked_by"] == ["alpha"]
    await _ok(base, secrets["beta"], "get_job", {"jobId": held[0]["job_id"]})

    outside = await _call(base, secrets["beta"], "start_verification", {"all": True})
    assert outside.is_error  # beta has no 'operate'
    # The operator sees which token was refused for what, by name.
    scraped = httpx2.get(f"{base}/metrics", timeout=30,
                         headers={"authorization": f"Bearer {secrets['alpha']}"}).text
    assert 'rookhaven_mcp_refusals_total{limit="open-jobs",token="beta"} 1.0' in scraped
    assert 'rookhaven_mcp_refusals_total{limit="scope",token="beta"} 1.0' in scraped
    assert 'token="alpha"' not in scraped and secrets["beta"] not in scraped

    workers.start("trail-w2", concurrency=1)
    wait_until(lambda: pipeline(env).store.jobs.states_many([h["job_id"] for h in held])
               == ["done"] * OPEN_JOBS, 60, what="beta's jobs done")
    again = await _ok(base, secrets["beta"], "submit_retrieval", _ask(100))
    assert again["asked_by"] == ["beta"]
