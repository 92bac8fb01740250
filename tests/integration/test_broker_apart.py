"""A broker Redis apart from the store's (ROOKHAVEN_BROKER_URL): real workers, real servers."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from rookhaven import Retriever, canonical_bytes
from tests.conftest import ROOT, wait_until
from tests.integration.workerfarm import (
    WorkerFarm,
    all_done,
    documents,
    environment,
    farm,
    pipeline,
    requests,
)


@pytest.fixture
def env(redis_url: str, key_prefix: str, broker_url: str) -> dict[str, str]:
    return environment(redis_url, key_prefix, ROOKHAVEN_BROKER_URL=broker_url)


@pytest.fixture
def workers(env: dict[str, str], tmp_path: Path) -> Iterator[WorkerFarm]:
    yield from farm(env, tmp_path)


def test_jobs_queue_on_the_broker_and_their_results_land_in_the_store(
        env: dict[str, str], workers: WorkerFarm, redis_url: str, broker_url: str,
        key_prefix: str) -> None:
    pipe = pipeline(env)
    docs = documents(200)
    pipe.add_corpus(docs, "port")
    workers.start("apart", concurrency=1)
    batch = requests(30, tag="apart-")
    ids = [ref.job_id for ref in pipe.submit_many(batch, "port")]
    wait_until(lambda: all_done(pipe, ids), 120, what="30 jobs through the broker apart")
    inline = Retriever(docs, pipe.settings.engine)
    for request, job in zip(batch, ids, strict=True):
        assert pipe.store.results.get(job) == canonical_bytes(inline.retrieve(request))
    # The queue's keys are on the broker; none of them on the store's Redis.
    celery = f"{key_prefix}:celery:*"
    assert list(redis.Redis.from_url(broker_url).scan_iter(match=celery))
    assert not list(redis.Redis.from_url(redis_url).scan_iter(match=celery))
    # A cluster named as broker is refused at once, in one line saying why.
    done = subprocess.run(
        [sys.executable, "-m", "rookhaven.cli.main", "submit", "--corpus", "port", "--query",
         "crane"], cwd=ROOT, capture_output=True, text=True, timeout=60, check=False,
        env={**env, "ROOKHAVEN_BROKER_URL": "redis+cluster://127.0.0.1:7000"})
    assert done.returncode == 2 and "cannot be the Celery broker" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr


@pytest.mark.parametrize("command", [
    ["-m", "celery", "-A", "workers", "worker", "-c", "1"],
    ["-m", "celery", "-A", "workers", "beat"],
    ["-m", "rookhaven.cli.main", "mcp"],
])
def test_a_cluster_store_without_a_broker_of_its_own_stops_every_entry_point_in_one_line(
        env: dict[str, str], command: list[str]) -> None:
    done = subprocess.run(
        [sys.executable, *command], cwd=ROOT, capture_output=True, text=True, timeout=120,
        check=False, stdin=subprocess.DEVNULL,
        env={k: v for k, v in env.items() if k != "ROOKHAVEN_BROKER_URL"}
        | {"ROOKHAVEN_REDIS_URL": "redis+cluster://127.0.0.1:7000"})
    assert done.returncode == 2, done.stderr[-2000:]
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "set ROOKHAVEN_BROKER_URL" in lines[0], done.stderr[-2000:]
