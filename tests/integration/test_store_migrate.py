"""A store made by an earlier Rookhaven (job records of form 1, a hash per job), upgraded as the
runbook says: its results keep being served, jobs are refused with a line naming the
command, `rookhaven store migrate` moves the records, and a real worker then finishes the
job the old release left queued, with the inline core's bytes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import orjson
import redis

from rookhaven import RetrievalRequest, Retriever
from rookhaven.config import Settings
from rookhaven.core.canonical import canonical_bytes
from rookhaven.pipeline import open_pipeline
from tests.conftest import ROOT, wait_until
from tests.integration.workerfarm import WorkerFarm, documents


def rookhaven(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "rookhaven.cli.main", *args], cwd=ROOT,
                          capture_output=True, text=True, env=env, timeout=120, check=False)


def test_an_older_store_is_migrated_and_its_queued_job_then_runs(
        env: dict[str, str], workers: WorkerFarm, tmp_path: Path) -> None:
    prefix = env["ROOKHAVEN_KEY_PREFIX"]
    client = redis.Redis.from_url(env["ROOKHAVEN_REDIS_URL"])
    client.set(f"{prefix}:layout", orjson.dumps({"version": 1, "tags": None}))
    pipe = open_pipeline(Settings.from_mapping(env))
    docs = documents(120)
    digest = pipe.add_corpus(docs, "port").digest
    request = RetrievalRequest(query="crane delay at the berth", seed="old-release")
    spec = pipe.spec(request, digest)
    # The job as the earlier release's CREATE left it: recorded, queued, its message lost.
    client.hset(f"{prefix}:job:{spec.key}", mapping={
        "id": spec.key, "key": spec.key, "request": canonical_bytes(spec.request),
        "corpus": digest, "provider": spec.provider, "params": canonical_bytes(spec.params),
        "state": "queued", "created": "1.000", "updated": "1.000", "enqueued": "1",
        "attempts": "0", "started": "", "finished": "", "worker": "", "error": ""})
    client.zadd(f"{prefix}:jobs:queued", {spec.key: 1.0})

    refused = rookhaven(env, "submit", "--corpus", "port", "--query", "tide")
    assert refused.returncode != 0 and "Traceback" not in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1, refused.stderr
    assert "rookhaven store migrate" in refused.stderr

    # A worker of the new release started before the migration says what to do and exits
    # before it takes a message (one that took them would drop jobs it cannot run).
    log = tmp_path / "early.log"
    with log.open("wb") as out:
        early = subprocess.run([sys.executable, "-m", "celery", "-A", "workers", "worker",
                                "-c", "1", "-l", "warning", "--without-gossip",
                                "--without-mingle", "--without-heartbeat"], cwd=ROOT, env=env,
                               stdout=out, stderr=out, timeout=120, check=False)
    assert early.returncode == 2
    assert "rookhaven store migrate" in log.read_text(errors="replace")
    assert not pipe.store.heartbeats.any_alive()
    # Reads that need job records say so too, instead of "no job".
    shown = rookhaven(env, "job", spec.key)
    assert shown.returncode == 2 and "rookhaven store migrate" in shown.stderr, shown.stderr
    swept = rookhaven(env, "sweep", "--older-than", "0")
    assert swept.returncode == 2 and "rookhaven store migrate" in swept.stderr, swept.stderr
    assert "rookhaven store migrate" in rookhaven(env, "store", "info").stdout

    pipe.store.heartbeats.beat("old-worker:1:a", 30)
    alive = rookhaven(env, "store", "migrate")
    assert alive.returncode == 2 and "is alive" in alive.stderr, alive.stderr
    pipe.store.heartbeats.stop("old-worker:1:a")
    moved = rookhaven(env, "store", "migrate")
    assert moved.returncode == 0, moved.stderr
    assert "moved 1 job record(s)" in moved.stdout
    assert "nothing to migrate" in rookhaven(env, "store", "migrate").stdout
    assert not list(client.scan_iter(match=f"{prefix}:job:*"))

    workers.start("new", 1)
    swept = rookhaven(env, "sweep", "--older-than", "0")
    assert swept.returncode == 0, swept.stderr
    fresh = open_pipeline(Settings.from_mapping(env))  # the layout as migrated
    wait_until(lambda: fresh.job(spec.key).state == "done", 90, what="the migrated job done")
    assert fresh.result(spec.key) == Retriever(docs, spec.provider).result_bytes(request)[0]

    # Audit copies as an earlier release stored them beside their results: one equal to its
    # result's, one that differs; only the equal one goes.
    stray = "sha256:" + "5" * 64
    client.set(f"{prefix}:audit:{spec.key}", fresh.audit(spec.key))
    client.set(f"{prefix}:audit:{stray}", b'{"edited":true}')
    dropped = rookhaven(env, "store", "migrate", "--drop-audit-copies")
    assert dropped.returncode == 0, dropped.stderr
    assert "removed 1 audit copy(ies)" in dropped.stdout and "kept 1" in dropped.stdout
    assert client.exists(f"{prefix}:audit:{spec.key}") == 0
    assert client.get(f"{prefix}:audit:{stray}") == b'{"edited":true}'
    assert fresh.audit(spec.key) == Retriever(docs, spec.provider).result_bytes(request)[1]
    client.close()
