"""The job pipeline against real Redis and real Celery workers: bytes, worker loss, pickle."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from celery import Celery

from rookhaven import Retriever, canonical_bytes
from rookhaven.pipeline import TASK_JOB, celery_config
from rookhaven.store import JobSpec
from tests.conftest import wait_until
from tests.integration.workerfarm import (
    WorkerFarm,
    all_done,
    documents,
    done_events,
    environment,
    farm,
    pipeline,
    requests,
    states,
)

pytestmark = pytest.mark.integration


@pytest.fixture
def env(redis_url: str, key_prefix: str) -> dict[str, str]:
    return environment(redis_url, key_prefix)


@pytest.fixture
def workers(env: dict[str, str], tmp_path: Path) -> Iterator[WorkerFarm]:
    yield from farm(env, tmp_path)


def test_a_thousand_jobs_complete_with_the_bytes_inline_retrieve_gives(
        env: dict[str, str], workers: WorkerFarm) -> None:
    pipe = pipeline(env)
    docs = documents()
    pipe.add_corpus(docs, "port")
    batch = requests(980)
    singles = requests(20, tag="single-")
    workers.start("w1", concurrency=2)
    refs = pipe.submit_many(batch, "port") + [pipe.submit(r, "port") for r in singles]
    ids = [r.job_id for r in refs]
    assert len(set(ids)) == 1000
    wait_until(lambda: all_done(pipe, ids), 120, what="1,000 jobs to finish")

    inline = Retriever(docs, pipe.settings.provider)
    for request, ref in zip(batch + singles, refs, strict=True):
        expected = inline.retrieve(request)
        assert pipe.result(ref.result_key) == canonical_bytes(expected)
        assert pipe.audit(ref.result_key) == canonical_bytes(expected.audit)
    assert set(done_events(pipe).values()) == {1}
    assert list(pipe.store.ledger.violations()) == []
    assert pipe.store.audits.count(corpus=refs[0].corpus_digest) == 1000
    # Submitting again is answered from the store, without a message.
    assert pipe.submit(batch[0], "port").cached


def test_a_worker_killed_mid_batch_loses_nothing_and_finishes_each_job_once(
        env: dict[str, str], workers: WorkerFarm) -> None:
    pipe = pipeline({**env, "ROOKHAVEN_BATCH_SIZE": "25"})
    pipe.add_corpus(documents(1500), "port")
    victim = workers.start("victim", concurrency=2)
    refs = pipe.submit_many(requests(1500), "port")
    ids = [r.job_id for r in refs]
    wait_until(lambda: states(pipe, ids).get("done", 0) >= 100, 60,
               what="the victim to finish some jobs", interval=0.01)
    workers.kill(victim)
    counts = states(pipe, ids)
    assert counts.get("done", 0) < len(ids), "the victim finished everything before the kill"

    started = time.monotonic()
    workers.start("rescuer", concurrency=2, beat=True)
    wait_until(lambda: all_done(pipe, ids), 90, what="every job to be done after the kill")
    print(f"\nkilled at {counts}; all done {time.monotonic() - started:.1f} s after restart")

    assert sorted(done_events(pipe)) == sorted(ids)
    assert set(done_events(pipe).values()) == {1}
    assert list(pipe.store.ledger.violations()) == []


def test_a_pickle_message_is_refused_and_the_ledger_keeps_its_job_open(
        env: dict[str, str], workers: WorkerFarm) -> None:
    pipe = pipeline(env)
    pipe.add_corpus(documents(50), "port")
    request = requests(1, tag="pickle-")[0]
    spec: JobSpec = pipe.spec(request, pipe.store.corpora.resolve("port"))
    assert pipe.store.jobs.create(spec) == "new"  # recorded, but only a pickle is sent

    rogue = Celery("rogue", set_as_current=False)
    rogue.conf.update(celery_config(pipe.settings))
    rogue.conf.accept_content = ["json", "pickle"]
    rogue.send_task(TASK_JOB, args=[spec.key], task_id=spec.key, serializer="pickle")
    queue = f"{env['ROOKHAVEN_KEY_PREFIX']}:celery:rookhaven"
    raw = pipe.store.client.lrange(queue, 0, -1)
    assert len(raw) == 1 and b"application/x-python-serialize" in raw[0]

    workers.start("w1", concurrency=1)
    probe = pipe.submit(requests(1, tag="probe-")[0], "port")  # queued behind the pickle
    wait_until(lambda: all_done(pipe, [probe.job_id]), 60, what="the JSON job behind it")
    record = pipe.job(spec.key)
    assert (record.state, record.attempts) == ("queued", 0)
    assert not pipe.store.results.exists(spec.key)
    assert not [e for e in pipe.store.ledger.events()
                if e.job == spec.key and e.event != "queued"]

    # The sweeper sends it again, as JSON, and then it runs.
    assert pipe.sweep(older_than=0).requeued == [spec.key]
    wait_until(lambda: all_done(pipe, [spec.key]), 60, what="the swept job")
