"""The job pipeline against real Redis and real Celery workers: bytes, worker loss, pickle."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from celery import Celery

from rookhaven import RetrievalRequest, Retriever, canonical_bytes
from rookhaven.pipeline import TASK_JOB, celery_config
from rookhaven.store import JobSpec
from tests.conftest import ROOT, wait_until
from tests.integration.workerfarm import (
    WorkerFarm,
    all_done,
    documents,
    done_events,
    farm,
    pipeline,
    requests,
    states,
)


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

    inline = Retriever(docs, pipe.settings.engine)
    for request, ref in zip(batch + singles, refs, strict=True):
        expected = inline.retrieve(request)
        assert pipe.result(ref.result_key) == canonical_bytes(expected)
        assert pipe.audit(ref.result_key) == canonical_bytes(expected.audit)
    assert set(done_events(pipe).values()) == {1}
    assert list(pipe.store.ledger.violations()) == []
    assert pipe.store.audits.count(corpus=refs[0].corpus_digest) == 1000
    # Submitting again is answered from the store, without a message.
    assert pipe.submit(batch[0], "port").cached


@pytest.mark.slow
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


@pytest.mark.slow
def test_the_command_line_adds_a_corpus_submits_waits_and_reads_back(
        env: dict[str, str], workers: WorkerFarm, tmp_path: Path) -> None:
    corpus = tmp_path / "port.jsonl"
    corpus.write_bytes(b"".join(canonical_bytes(d) + b"\n" for d in documents(40)))

    def rookhaven(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "rookhaven.cli.main", *args], cwd=ROOT,
                              env=env, capture_output=True, text=True, timeout=120)

    added = rookhaven("corpus", "add", str(corpus), "--name", "port")
    assert added.returncode == 0, added.stderr
    digest = added.stdout.strip()
    assert digest.startswith("sha256:")
    assert f"port@1\t{digest}\t40 documents" in rookhaven("corpus", "list").stdout

    workers.start("w1", concurrency=1)
    query = ("--corpus", "port", "--query", "crane delay and tide", "--budget", "5")
    job_id = rookhaven("submit", *query).stdout.strip()
    waited = rookhaven("submit", *query, "--wait")
    assert waited.returncode == 0, waited.stderr
    expected = Retriever(documents(40), pipeline(env).settings.engine).retrieve(
        RetrievalRequest(query="crane delay and tide", recallBudget=5))
    assert waited.stdout.encode() == canonical_bytes(expected) + b"\n"
    assert json.loads(rookhaven("job", job_id).stdout)["state"] == "done"
    assert rookhaven("result", job_id, "--audit").stdout.encode() == \
        canonical_bytes(expected.audit) + b"\n"
    assert json.loads(rookhaven("sweep").stdout)["requeued"] == []

    missing = rookhaven("job", "sha256:" + "0" * 64)
    assert missing.returncode == 2 and "no job" in missing.stderr
    unconfigured = subprocess.run(
        [sys.executable, "-m", "rookhaven.cli.main", "corpus", "list"], cwd=ROOT,
        env={k: v for k, v in env.items() if k != "ROOKHAVEN_REDIS_URL"},
        capture_output=True, text=True, timeout=60)
    assert unconfigured.returncode == 2 and "set ROOKHAVEN_REDIS_URL" in unconfigured.stderr


def test_a_worker_indexes_the_newest_corpus_before_it_forks_its_pool(
        env: dict[str, str], tmp_path: Path) -> None:
    pipe = pipeline(env)
    docs = documents()
    digest = pipe.add_corpus(docs, "port").digest
    farm = WorkerFarm({**env, "ROOKHAVEN_LOG_LEVEL": "info"}, tmp_path)
    try:
        farm.start("prefetcher", concurrency=2)
        lines = [json.loads(line) for line in (tmp_path / "prefetcher.log").read_bytes()
                 .splitlines() if line.startswith(b"{")]
        prefetched = [e for e in lines if e["msg"].startswith("prefetched")]
        assert [e["corpora"] for e in prefetched] == [[digest]]
        # After the prefetch, before the fork: the index is among what the pool inherits
        # frozen (a bare interpreter holds some 8,000 objects; with the stack, over 150,000).
        frozen = [e for e in lines if e["msg"].startswith("froze")]
        assert len(frozen) == 1 and frozen[0]["objects"] > 50_000
        assert lines.index(prefetched[0]) < lines.index(frozen[0])
        request = requests(1, tag="prefetched-")[0]
        ref = pipe.submit(request, "port")
        wait_until(lambda: all_done(pipe, [ref.job_id]), 60, what="a job on the prefetched index")
        expected = Retriever(docs, pipe.settings.engine).retrieve(request)
        assert pipe.result(ref.result_key) == canonical_bytes(expected)
    finally:
        farm.stop_all()


@pytest.fixture
def slow_env(env: dict[str, str]) -> dict[str, str]:
    """SWEEP_AFTER and the visibility timeout far beyond any wait below: a job that comes
    back within it came back by the rule under test."""
    return {**env, "ROOKHAVEN_SWEEP_AFTER": "600", "ROOKHAVEN_VISIBILITY_TIMEOUT": "900"}


@pytest.fixture
def slow_workers(slow_env: dict[str, str], tmp_path: Path) -> Iterator[WorkerFarm]:
    yield from farm(slow_env, tmp_path)


def test_a_job_delivered_to_a_worker_killed_before_its_pool_started_it_moves_on_at_once(
        slow_env: dict[str, str], slow_workers: WorkerFarm) -> None:
    workers, pipe = slow_workers, pipeline(slow_env)
    pipe.add_corpus(documents(), "port")
    victim = workers.start("victim", concurrency=1)
    (child,) = pool_children(victim.pid)
    os.kill(child, signal.SIGSTOP)  # the message arrives; nothing will start it
    ref = pipe.submit(requests(1, tag="delivered-")[0], "port")
    wait_until(lambda: pipe.job(ref.job_id).worker is not None, 30,
               what="the victim's main process to receive the message")
    record = pipe.job(ref.job_id)
    assert record.state == "queued"
    assert f"{workers.prefix}:worker:{record.worker}" in workers.instances()  # the victim
    workers.kill(victim)

    started = time.monotonic()
    workers.start("rescuer", concurrency=1, beat=True)
    wait_until(lambda: pipe.job(ref.job_id).state == "done", 60,
               what="the delivered job to be done by the rescuer")
    took = time.monotonic() - started
    swept = [e for e in pipe.store.ledger.events()
             if e.job == ref.job_id and e.event == "requeued"]
    assert [e.detail for e in swept] == [f"delivered to worker {record.worker}, which stopped"]
    assert set(done_events(pipe).values()) == {1}
    print(f"\nthe delivered job was done {took:.1f} s after the rescuer started")


def pool_children(pid: int) -> list[int]:
    """The pids whose parent is ``pid`` and that are Celery processes (a worker's pool, not
    its kernels' background compile), from /proc."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
                command = (entry / "cmdline").read_bytes()
            except OSError:
                continue  # exited meanwhile
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid and b"celery" in command:
                found.append(int(entry.name))
    return found


def test_a_job_whose_message_vanished_is_sent_again_once_nothing_waits(
        slow_env: dict[str, str], slow_workers: WorkerFarm) -> None:
    workers, pipe = slow_workers, pipeline(slow_env)
    pipe.add_corpus(documents(), "port")
    refs = pipe.submit_many(requests(3, tag="vanished-"), "port")
    assert pipe.dispatcher.waiting() == 1  # one batch message
    # What a worker killed between BRPOP and recording the delivery leaves: the message
    # gone from the broker, the jobs queued, received by nobody.
    assert workers.client.rpop(f"{workers.prefix}:celery:rookhaven") is not None
    assert pipe.dispatcher.waiting() == 0
    started = time.monotonic()
    workers.start("rescuer", concurrency=1, beat=True)
    ids = [r.job_id for r in refs]
    wait_until(lambda: all_done(pipe, ids), 60, what="the vanished jobs to be done")
    took = time.monotonic() - started
    details = {e.detail for e in pipe.store.ledger.events() if e.event == "requeued"}
    assert details == {"queued, with no message waiting"}
    print(f"\nthe vanished jobs were done {took:.1f} s after the rescuer started")
