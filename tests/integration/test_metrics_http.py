"""/metrics over HTTP: the MCP server (behind its token) and a worker with a metrics port."""

from __future__ import annotations

import urllib.error
import urllib.request
from pathlib import Path

import pytest

from rookhaven.config import Settings
from rookhaven.pipeline import open_pipeline
from tests.conftest import free_port, wait_until
from tests.integration.test_mcp_http import TOKEN, _serve, _stop
from tests.integration.workerfarm import WorkerFarm, all_done, documents, environment
from tests.integration.workerfarm import requests as make_requests
from tests.mcp_support import write_corpus


def get(url: str, token: str | None = None) -> tuple[int, str]:
    request = urllib.request.Request(url)
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def test_the_mcp_server_serves_metrics_behind_its_token(tmp_path: Path) -> None:
    port = free_port()
    proc = _serve(write_corpus(tmp_path), port, ROOKHAVEN_MCP_TOKEN=TOKEN)
    try:
        assert get(f"http://127.0.0.1:{port}/metrics")[0] == 401
        status, body = get(f"http://127.0.0.1:{port}/metrics", TOKEN)
        assert status == 200
        assert "# TYPE rookhaven_mcp_calls_total counter" in body
    finally:
        _stop(proc)


@pytest.fixture
def env(redis_url: str, key_prefix: str) -> dict[str, str]:
    return environment(redis_url, key_prefix, ROOKHAVEN_ENGINE="tfcosine",
                       ROOKHAVEN_METRICS_PORT=str(free_port()))


def test_a_worker_with_a_metrics_port_serves_the_cluster_counts(
        env: dict[str, str], workers: WorkerFarm) -> None:
    workers.start("metrics", concurrency=1)
    pipe = open_pipeline(Settings.from_mapping(env))
    pipe.add_corpus(documents(50), "port")
    ids = [r.job_id for r in pipe.submit_many(make_requests(30), "port")]
    wait_until(lambda: all_done(pipe, ids), 60, what="30 jobs")
    url = f"http://127.0.0.1:{env['ROOKHAVEN_METRICS_PORT']}/metrics"
    status, body = get(url)
    assert status == 200
    assert 'rookhaven_job_events_total{event="done"} 30.0' in body
    assert "rookhaven_results_stored_total 30.0" in body
    assert "rookhaven_store_up 1.0" in body
