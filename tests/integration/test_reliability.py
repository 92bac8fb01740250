"""Reliability against real Redis and real workers: a kill storm fails no healthy job, a job
that kills its process stops at the attempt limit, a poison message is dropped, lost
results heal, and a verifier facing an emptied store says so."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import orjson
import pytest
from celery import Celery

from rookhaven import Retriever, canonical_bytes
from rookhaven.pipeline import TASK_JOB, celery_config
from rookhaven.pipeline.executor import CHUNK
from tests.conftest import wait_until
from tests.integration.workerfarm import (
    WorkerFarm,
    all_done,
    documents,
    pipeline,
    requests,
    states,
)


def rookhaven(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "rookhaven.cli.main", *args],
                          capture_output=True, text=True, env=env, timeout=300, check=False)


# A bigger storm by hand: ROOKHAVEN_TEST_STORM=5000,14 python -m pytest -s -k kill_storm ...
JOBS, KILLS = (int(n) for n in os.environ.get("ROOKHAVEN_TEST_STORM", "2000,6").split(","))


@pytest.mark.slow
def test_a_kill_storm_ends_with_every_job_done_and_none_failed(
        env: dict[str, str], workers: WorkerFarm) -> None:
    pipe = pipeline(env)
    pipe.add_corpus(documents(300), "port")
    refs = pipe.submit_many(requests(JOBS, tag="storm-"), "port")
    ids = [r.job_id for r in refs]
    rng = random.Random(7)
    worker = workers.start("storm-0", 2)
    kills, recoveries = 0, []
    step = JOBS // (KILLS + 2)
    started = time.monotonic()
    # Per job, the kills that found it begun and unfinished, and its attempts at the last.
    hits: dict[str, int] = {}
    seen: dict[str, int] = {}
    for kills in range(1, KILLS + 1):
        wait_until(lambda k=kills: states(pipe, ids).get("done", 0) >= k * step, 300,
                   what=f"jobs done before kill {kills}", interval=0.02)
        time.sleep(rng.uniform(0.0, 0.5))  # a random moment mid-batch (not a wait)
        workers.kill(worker)
        killed = time.monotonic()
        for record in pipe.store.jobs.get_many(ids):
            if record and record.state == "running" and record.attempts > seen.get(
                    record.id, 0):  # begun since the last kill, not left from an earlier one
                hits[record.id] = hits.get(record.id, 0) + 1
                seen[record.id] = record.attempts
        worker = workers.start(f"storm-{kills}", 2)
        recoveries.append(time.monotonic() - killed)

    def swept_and_done() -> bool:
        pipe.sweep(older_than=5)
        return bool(all_done(pipe, ids))

    wait_until(swept_and_done, 600, interval=0.5, what="every job after the storm")
    drained = time.monotonic() - started
    records = [r for r in pipe.store.jobs.get_many(ids) if r]
    assert [(r.id, r.error) for r in records if r.state == "failed"] == []
    # An attempt is charged by a kill that found the job begun, and once for the run that
    # finished it; a job begun before runs alone, so a kill charges at most two pool
    # processes' chunks of CHUNK jobs each (and a few jobs running alone). One more may
    # come from a second copy of a killed message (the broker's restore and the sweeper's)
    # started while the first was computing the job: both compute it (ADR 0005).
    assert [r.id for r in records if r.attempts - 1 > hits.get(r.id, 0) + 1] == []
    assert sum(r.attempts == 1 for r in records) >= len(ids) - 2 * (CHUNK + 2) * kills
    reference = Retriever(documents(300), pipe.settings.engine)
    for ref, request in list(zip(refs, requests(JOBS, tag="storm-"), strict=True))[::97]:
        assert pipe.result(ref.result_key) == canonical_bytes(reference.retrieve(request))
    charged = sum(r.attempts for r in records) - len(records)
    print(f"\n{JOBS} jobs, {kills} SIGKILLs, 0 failed, {charged} extra attempts charged; "
          f"worker back after {min(recoveries):.1f}-{max(recoveries):.1f} s; all done "
          f"{drained:.1f} s after the first job")


def _pool_children(main: int) -> list[int]:
    found = Path(f"/proc/{main}/task/{main}/children").read_text().split()
    return [int(pid) for pid in found]


@pytest.mark.slow
def test_a_job_that_kills_its_pool_child_stops_at_the_attempt_limit(
        env: dict[str, str], workers: WorkerFarm) -> None:
    pipe = pipeline(env)
    pipe.add_corpus(documents(3000), "port")
    # Not prefetched: the pool child indexes the corpus inside the job, which keeps the job
    # running long enough to be killed mid-way (a prefetched one finishes in milliseconds).
    workers.env["ROOKHAVEN_WORKER_PREFETCH"] = "0"
    worker = workers.start("victim", 1)
    (ref,) = pipe.submit_many(requests(1, tag="oom-"), "port")
    limit = pipe.settings.job_max_attempts
    seen = 0
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        record = pipe.job(ref.job_id)
        if record.state in ("failed", "done"):
            break
        if record.state == "running" and record.attempts > seen:
            seen = record.attempts  # it began: kill the pool child computing it, as OOM would
            for child in _pool_children(worker.pid):
                os.kill(child, signal.SIGKILL)
        time.sleep(0.002)
    record = pipe.job(ref.job_id)
    assert (record.state, record.attempts) == ("failed", limit), record
    assert "never finished: its worker process died each time" in (record.error or "")
    assert worker.poll() is None  # the worker itself lives on and takes other jobs
    (other,) = pipe.submit_many(requests(1, tag="after-oom-"), "port")
    wait_until(lambda: all_done(pipe, [other.job_id]), 60, what="a job after the loop")


def _raw_message(pipe_settings: object, job_id: str, queue_key: str, client: object,
                 content_type: str | None) -> None:
    rogue = Celery("rogue", set_as_current=False)
    rogue.conf.update(celery_config(pipe_settings))  # type: ignore[arg-type]
    rogue.send_task(TASK_JOB, args=[job_id], task_id=job_id)
    raw = json.loads(client.lpop(queue_key))  # type: ignore[attr-defined]
    if content_type is None:
        raw.pop("content-type", None)
    else:
        raw["content-type"] = content_type
    client.rpush(queue_key, json.dumps(raw))  # type: ignore[attr-defined]


def test_a_poison_message_is_dropped_and_recorded_while_the_worker_goes_on(
        env: dict[str, str], workers: WorkerFarm) -> None:
    pipe = pipeline(env)
    pipe.add_corpus(documents(50), "port")
    queue = f"{env['ROOKHAVEN_KEY_PREFIX']}:celery:rookhaven"
    poisoned = [pipe.spec(r, pipe.store.corpora.resolve("port"))
                for r in requests(2, tag="poison-")]
    for spec, content_type in zip(poisoned, (None, "application/x-unknown"), strict=True):
        pipe.store.jobs.create(spec)
        _raw_message(pipe.settings, spec.key, queue, pipe.store.client, content_type)
    worker = workers.start("w1", 1)
    probe = pipe.submit(requests(1, tag="probe-")[0], "port")  # queued behind the poison
    wait_until(lambda: all_done(pipe, [probe.job_id]), 60, what="the job behind the poison")
    rejected = list(pipe.store.ledger.rejected())
    assert len(rejected) == 2 and {r["task"] for r in rejected} == {TASK_JOB}
    assert worker.poll() is None
    assert pipe.store.client.llen(queue) == 0  # dropped, not restored for the next worker
    second = workers.start("w2", 1)
    assert second.poll() is None and len(list(pipe.store.ledger.rejected())) == 2


def test_deleted_results_come_back_byte_identical_after_a_sweep(
        env: dict[str, str], workers: WorkerFarm) -> None:
    pipe = pipeline(env)
    pipe.add_corpus(documents(200), "port")
    workers.start("w1", 2)
    ids = [r.job_id for r in pipe.submit_many(requests(200, tag="heal-"), "port")]
    wait_until(lambda: all_done(pipe, ids), 120, what="jobs done")
    before = {i: pipe.result(i) for i in ids}
    lost = ids[::3]
    pipe.store.client.delete(*[pipe.store.keys.result(i) for i in lost])
    done = rookhaven(env, "sweep")
    assert done.returncode == 0, done.stderr
    assert sorted(orjson.loads(done.stdout)["healed"]) == sorted(lost)
    wait_until(lambda: all(pipe.store.results.exists(i) for i in lost), 120,
               what="the lost results to be recomputed")
    assert {i: pipe.result(i) for i in ids} == before


def test_an_emptied_store_makes_verify_exit_1_saying_what_is_gone(
        env: dict[str, str], workers: WorkerFarm) -> None:
    pipe = pipeline(env)
    pipe.add_corpus(documents(50), "port")
    workers.start("w1", 1)
    ids = [r.job_id for r in pipe.submit_many(requests(20, tag="gone-"), "port")]
    wait_until(lambda: all_done(pipe, ids), 60, what="jobs done")
    assert rookhaven(env, "verify", "--all").returncode == 0
    prefix = env["ROOKHAVEN_KEY_PREFIX"]
    keys = list(pipe.store.client.scan_iter(match=f"{prefix}:*", count=1000))
    pipe.store.client.delete(*keys)  # a Redis restarted empty, as far as this store goes
    done = rookhaven(env, "verify", "--all", "--json")
    assert done.returncode == 1, done.stdout
    run = orjson.loads(done.stdout)
    assert run["checked"] == 0 and run["alarms"] == 1
    assert run["verdicts"][0]["outcome"] == "nothing-checked"
