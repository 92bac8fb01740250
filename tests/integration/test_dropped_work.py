"""Work a worker had to drop comes back within a heartbeat and a sweep, not a time limit.

Two operator scenarios with real processes: every client connection of a Redis dropped while
jobs drain (Celery terminates the tasks it can no longer acknowledge, and forgets the
messages it had reserved, while the worker itself lives on), and a Sentinel primary
SIGKILLed in a store's first seconds. The task time limit here is a minute, so a job left
to the time-limit rule would blow the recovery bound (ops/runbook.md) many times over.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import redis

from rookhaven import Document, Retriever, canonical_bytes
from rookhaven.errors import StoreUnavailableError
from rookhaven.pipeline import Pipeline
from tests.conftest import ROOT, free_port, start_redis_server, wait_until
from tests.integration.chaos import BOUND, RECOVERY
from tests.integration.sentinels import SentinelTopology, topology
from tests.integration.workerfarm import (
    WorkerFarm,
    all_done,
    documents,
    environment,
    farm,
    pipeline,
    requests,
    states,
)

TERMINATED = b"cannot be acknowledged after a connection loss"


@pytest.fixture
def aof_redis(tmp_path: Path) -> Iterator[str]:
    """A Redis of the test's own, AOF ``always``, as the operator's."""
    port = free_port()
    (tmp_path / "redis").mkdir()
    proc = start_redis_server(tmp_path / "redis", port, "--appendonly", "yes",
                              "--appendfsync", "always")
    try:
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        proc.kill()
        proc.wait(timeout=10)


@contextmanager
def one_worker(env: dict[str, str], tmp_path: Path) -> Iterator[tuple[Pipeline, list[Document]]]:
    """The store's pipeline with corpus ``port`` (3,000 documents) and its documents, one
    ``celery -A workers worker -B -c 2`` on it; the worker reaped after."""
    (tmp_path / "logs").mkdir()
    farmed = farm(env, tmp_path / "logs")
    workers: WorkerFarm = next(farmed)
    try:
        pipe = pipeline(env)
        docs = documents(3000)
        pipe.add_corpus(docs, "port")
        workers.start("w1", concurrency=2, beat=True)
        yield pipe, docs
    finally:
        next(farmed, None)


def blip(url: str) -> None:
    """Drop every client connection of the server at ``url`` (the server answers on)."""
    admin = redis.Redis.from_url(url)
    try:
        admin.client_kill_filter(_type="normal", skipme=True)
        admin.client_kill_filter(_type="pubsub", skipme=True)
    finally:
        admin.close()


def terminations(logs: Path) -> int:
    """How many tasks the workers terminated at a connection loss, by their logs."""
    return sum(path.read_bytes().count(TERMINATED) for path in logs.glob("*.log"))


def drained(pipe: Pipeline, ids: list[str], since: float) -> tuple[float, float]:
    """Wait until every job of ``ids`` is done (failing the test, saying in which states they
    are, well past the bound); the seconds from ``since`` (``time.time()``, the clock jobs
    are stamped with) until the last job sent again after it was done, and until all were."""

    def done() -> bool:
        try:
            return bool(all_done(pipe, ids))
        except StoreUnavailableError:  # the store is still moving to a new primary
            return False

    deadline = time.monotonic() + BOUND + 30
    while not done():
        assert time.monotonic() < deadline, (
            f"jobs not all done {BOUND + 30:g} s after the connection came back: "
            f"{states(pipe, ids)}")
        time.sleep(0.2)
    everything = time.time() - since
    again = {e.job for e in pipe.store.ledger.events() if e.event == "requeued" and e.at > since}
    finished = [r.finished or 0.0 for r in pipe.store.jobs.get_many(sorted(again)) if r]
    slowest = max(finished, default=since) - since
    assert slowest <= BOUND, (f"a job sent again was done {slowest:.1f} s after the "
                              f"connection came back (bound {BOUND:g} s)")
    return slowest, everything


def handed_back_once(pipe: Pipeline, ids: list[str]) -> dict[str, int]:
    """Each job done once in the ledger and sent again at most once; how many were sent
    again for each reason."""
    done: dict[str, int] = {}
    sent: dict[str, int] = {}
    reasons: dict[str, int] = {}
    for event in pipe.store.ledger.events():
        if event.event == "done":
            done[event.job] = done.get(event.job, 0) + 1
        elif event.event == "requeued":
            sent[event.job] = sent.get(event.job, 0) + 1
            reasons[event.detail] = reasons.get(event.detail, 0) + 1
    assert sorted(done) == sorted(ids) and set(done.values()) == {1}
    twice = {job: n for job, n in sent.items() if n > 1}
    assert not twice, f"{len(twice)} job(s) sent again more than once: {reasons}"
    return reasons


def submit_and_wait(env: dict[str, str], lines: Path) -> subprocess.CompletedProcess[str]:
    """``rookhaven submit --requests FILE --wait``, with its default timeout."""
    return subprocess.run(
        [sys.executable, "-m", "rookhaven.cli.main", "submit", "--corpus", "port",
         "--requests", str(lines), "--wait"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False)


@pytest.mark.slow
def test_a_connection_blip_hands_back_the_tasks_celery_terminated(
        aof_redis: str, tmp_path: Path) -> None:
    env = environment(aof_redis, "rh-blip", **RECOVERY)
    with one_worker(env, tmp_path) as (pipe, docs):
        batch = requests(3000, tag="blip-")
        lines = tmp_path / "requests.jsonl"
        lines.write_text("".join(r.model_dump_json(by_alias=True) + "\n" for r in batch))
        ids = [r.job_id for r in pipe.submit_many(batch, "port")]
        # Blips while a batch runs, until one lands on a running task (the worker's log
        # says it terminated it); after each, the workers take jobs again before the next.
        blips = 0
        while terminations(tmp_path / "logs") == 0 and blips < 20:
            wait_until(lambda: states(pipe, ids).get("running", 0) > 0, 60,
                       what="a batch running", interval=0.01)
            done = states(pipe, ids).get("done", 0)
            blip(aof_redis)
            blips += 1
            wait_until(lambda d=done: states(pipe, ids).get("done", 0) > d
                       or terminations(tmp_path / "logs") > 0, 60,
                       what="the worker back after the blip", interval=0.05)
        back = time.time()
        assert terminations(tmp_path / "logs") > 0, "no blip landed on a running task"
        recovered, everything = drained(pipe, ids, back)
        reasons = handed_back_once(pipe, ids)
        again = submit_and_wait(env, lines)
        assert again.returncode == 0, again.stderr[-2000:]
        inline = Retriever(docs, pipe.settings.engine)
        for request, job_id in list(zip(batch, ids, strict=True))[::37]:
            assert pipe.result(job_id) == canonical_bytes(inline.retrieve(request))
        print(f"\n{blips} blip(s), {terminations(tmp_path / 'logs')} task(s) terminated; "
              f"the last sent again done {recovered:.1f} s after the last, all {len(ids)} jobs "
              f"{everything:.1f} s after it; sent again: {reasons}")


@pytest.fixture
def nodes(tmp_path: Path) -> Iterator[SentinelTopology]:
    yield from topology(tmp_path / "redis")


@pytest.mark.slow
def test_a_failover_in_the_stores_first_seconds_hands_back_every_job(
        nodes: SentinelTopology, tmp_path: Path) -> None:
    env = environment(nodes.url, "rh-early", **RECOVERY)
    with one_worker(env, tmp_path) as (pipe, docs):
        batch = requests(400, tag="early-")
        ids = [r.job_id for r in pipe.submit_many(batch, "port")]
        wait_until(lambda: states(pipe, ids).get("done", 0) > 0, 60, what="a job done")
        old = nodes.ports["primary"]
        nodes.kill("primary")  # before any sweep recorded the primary
        wait_until(lambda: nodes.primary_port() not in (None, old), 60,
                   what="the Sentinels to promote the replica")
        back = time.time()
        recovered, everything = drained(pipe, ids, back)
        reasons = handed_back_once(pipe, ids)
        inline = Retriever(docs, pipe.settings.engine)
        for request, job_id in list(zip(batch, ids, strict=True))[::7]:
            assert pipe.result(job_id) == canonical_bytes(inline.retrieve(request))
        print(f"\nthe last job sent again done {recovered:.1f} s after the promotion, all "
              f"{len(ids)} {everything:.1f} s after it; sent again: {reasons}")
