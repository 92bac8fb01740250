"""The store on a real Redis Cluster: a primary SIGKILLed and 1,000 slots resharded mid-run.

Three primaries with a replica each (tests/integration/clusters.py), a broker Redis of its
own, two real workers, ``ROOKHAVEN_REDIS_MIN_REPLICAS=1``. A checkpoint set is signed while
jobs drain; then a primary is killed, its replica promoted, a new node added as that one's
replica, and 1,000 slots moved between primaries while more jobs run. Every job
acknowledged before the kill is still there, every result is the inline core's bytes, and
``verify --all --checkpoint`` finds every shard's log consistent with the set signed before
the kill; then one result erased with its leaf is named, with a mirror, and no other.
``ROOKHAVEN_TEST_CLUSTER_JOBS=10000`` is the issue's full run.

The dead node is replaced by a new empty one (``redis-cli --cluster add-node
--cluster-slave``), as the runbook says: with MIN_REPLICAS=1 the promoted primary
acknowledges nothing until it has a replica again, and a dead primary restarted with its
old view of the slots serves them, empty, until the cluster corrects it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from rookhaven import Retriever, canonical_bytes
from rookhaven.transparency import checkpoints
from rookhaven.transparency.note import generate_key
from rookhaven.verification.models import ALARMS
from tests.conftest import ROOT, wait_until
from tests.integration.clusters import ClusterNodes, cluster
from tests.integration.sentinels import submitted
from tests.integration.test_sentinel_failover import acknowledged
from tests.integration.workerfarm import (
    WorkerFarm,
    all_done,
    documents,
    environment,
    farm,
    pipeline,
    requests,
)
from tests.results_support import forget_job

JOBS = int(os.environ.get("ROOKHAVEN_TEST_CLUSTER_JOBS", "1200"))
PRIVATE, VERIFIER = generate_key("rookhaven.test/cluster", bytes(range(32)))


@pytest.fixture
def nodes(tmp_path: Path) -> Iterator[ClusterNodes]:
    yield from cluster(tmp_path / "cluster")


@pytest.fixture
def env(nodes: ClusterNodes, broker_url: str) -> dict[str, str]:
    return environment(nodes.url, "rh-cluster", ROOKHAVEN_BROKER_URL=broker_url,
                       ROOKHAVEN_BATCH_SIZE="10", ROOKHAVEN_REDIS_MIN_REPLICAS="1",
                       ROOKHAVEN_REDIS_REPLICA_TIMEOUT="1", ROOKHAVEN_REDIS_TIMEOUT="20",
                       ROOKHAVEN_LOG_LEVEL="info")


@pytest.fixture
def workers(env: dict[str, str], tmp_path: Path) -> Iterator[WorkerFarm]:
    (tmp_path / "logs").mkdir()
    yield from farm(env, tmp_path / "logs")


@pytest.mark.slow
def test_a_primary_killed_and_slots_resharded_mid_run_lose_nothing_and_break_no_log(
        nodes: ClusterNodes, env: dict[str, str], workers: WorkerFarm,
        tmp_path: Path) -> None:
    pipe = pipeline(env)
    assert pipe.store.keys.sharded and len(pipe.store.logs) == 64
    docs = documents(800)
    digest = pipe.add_corpus(docs, "port").digest
    first, later = requests(JOBS, tag="c-"), requests(JOBS // 4, tag="after-")
    started = time.monotonic()
    # Queued before the workers start, neither start waited for: workers already running
    # can keep pace with a submitter that confirms a replica every batch, and leave nothing
    # to drain when the kill lands (as the Sentinel failover test found on a slow machine).
    ids = [r.job_id for r in pipe.submit_many(first, "port")]
    procs = [workers.start("c1", concurrency=1, beat=True, wait=False),  # beat sweeps what
             workers.start("c2", concurrency=1, wait=False)]  # a failover dropped
    wait_until(lambda: pipe.store.audits.count(corpus=digest) >= JOBS // 5, 300,
               what=f"{JOBS // 5} jobs done")
    assert all(proc.poll() is None for proc in procs), "a worker exited: see its log"
    note = checkpoints.sign_now(pipe.store, PRIVATE)  # the set an auditor keeps
    (tmp_path / "before.cp").write_text(note)

    named = {int(part.rsplit(":", 1)[1]) for part in nodes.url.split("//")[1].split(",")}
    victim = max(set(nodes.primaries()) - named or set(nodes.primaries()))
    logs = sorted((tmp_path / "logs").glob("*.log"))
    sizes = {path: path.stat().st_size for path in logs}
    nodes.kill(victim)
    before = acknowledged(tmp_path / "logs", sizes)
    assert 0 < len(before) < JOBS, "the kill must land while jobs drain"
    wait_until(nodes.healthy, 60, what="a replica promoted in the killed primary's place")
    wait_until(lambda: [p for p in nodes.primaries() if not nodes.replicas_of(p)], 30,
               what="the promoted replica to serve as primary")
    nodes.replace(victim)
    wait_until(lambda: all(nodes.replicas_of(p) for p in nodes.primaries()), 60,
               what="every primary to have a replica again")

    more = wait_until(lambda: submitted(pipe, later), 60, what="a submission after failover")
    source, target = sorted(nodes.primaries().values())[:2]
    moved = nodes.reshard(source, target, 1000)  # while the later jobs run
    assert moved.returncode == 0, moved.stdout[-2000:] + moved.stderr[-2000:]
    everything = ids + [r.job_id for r in more]
    wait_until(lambda: all_done(pipe, everything), 600,
               what=f"all {len(everything)} jobs done after the kill and the reshard")
    elapsed = time.monotonic() - started

    held = pipe.store.results.get_many(sorted(before))
    assert all(r is not None for r in held), "an acknowledged result was lost"
    inline = Retriever(docs, pipe.settings.engine)
    stored = pipe.store.results.get_many(everything)
    for request, data in zip(first + later, stored, strict=True):
        assert data == canonical_bytes(inline.retrieve(request))

    verify = subprocess.run(
        [sys.executable, "-m", "rookhaven.cli.main", "verify", "--all", "--json",
         "--checkpoint", str(tmp_path / "before.cp"), "--verifier-key", VERIFIER],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert verify.returncode == 0, verify.stdout[-2000:] + verify.stderr[-2000:]
    run = json.loads(verify.stdout)
    assert run["checked"] == len(everything) == run["matched"] and run["alarms"] == 0
    # One shard's consistency proof is never taken for the log's: the shard must be named.
    log_cli = [sys.executable, "-m", "rookhaven.cli.main", "log", "consistency", "1"]
    unnamed = subprocess.run([*log_cli, "2"], cwd=ROOT, env=env, capture_output=True,
                             text=True, timeout=120)
    assert unnamed.returncode == 2 and "--shard N" in unnamed.stderr, unnamed.stderr
    longest = max(pipe.store.logs, key=lambda log: log.size())
    named = subprocess.run([*log_cli, str(longest.size()), "--shard", str(longest.shard)],
                           cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert named.returncode == 0 and json.loads(named.stdout)["verified"], named.stderr

    info = subprocess.run([sys.executable, "-m", "rookhaven.cli.main", "store", "info",
                           "--json", "--sample", "50"], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=120)
    assert info.returncode == 0, info.stderr[-2000:]
    usage = json.loads(info.stdout)
    assert usage["log_shards"] == 64 and usage["results"] == len(everything)
    assert len(usage["primaries"]) == 3 and sum(usage["primaries"].values()) == 16384
    # Reading a job needs the store alone: no broker setting, which a cluster store lacks.
    alone = {k: v for k, v in env.items() if k != "ROOKHAVEN_BROKER_URL"}
    job = subprocess.run([sys.executable, "-m", "rookhaven.cli.main", "job", ids[0]],
                         cwd=ROOT, env=alone, capture_output=True, text=True, timeout=120)
    assert job.returncode == 0 and json.loads(job.stdout)["state"] == "done", job.stderr

    # The attack, on the cluster: with a mirror, one result erased together with its
    # job, index entries, leaf and leaf-index entry is named, and no other is accused.
    mirrored = subprocess.run(
        [sys.executable, "-m", "rookhaven.cli.main", "log", "mirror", str(tmp_path / "m")],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert mirrored.returncode == 0, mirrored.stderr[-2000:]
    victim = ids[len(ids) // 2]
    shard, client = pipe.store.keys.shard(victim), pipe.store.client
    log = pipe.store.log_of(victim)
    index = log.index_of(victim)
    assert index is not None
    leaf = client.lindex(shard.log_leaves, index)
    client.delete(shard.result(victim), shard.audit(victim))
    forget_job(pipe.store, victim)
    client.zrem(shard.audits_by_time, victim)
    client.zrem(shard.audits_by_corpus(digest), victim)
    client.lrem(shard.log_leaves, 1, leaf)
    client.hdel(shard.log_index, victim)
    caught = subprocess.run(
        [sys.executable, "-m", "rookhaven.cli.main", "verify", "--all", "--json", "--mirror",
         str(tmp_path / "m"), "--checkpoint", str(tmp_path / "before.cp"), "--verifier-key",
         VERIFIER], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert caught.returncode != 0
    alarms = [v for v in json.loads(caught.stdout)["verdicts"] if v["outcome"] in ALARMS]
    assert ("erased", victim) in {(v["outcome"], v["key"]) for v in alarms}
    assert {v["key"] for v in alarms} - {"log", "store"} == {victim}, alarms
    assert any(v["outcome"] == "log-inconsistent" and f"log shard {log.shard}:" in v["detail"]
               for v in alarms), alarms
    print(f"\ncluster: {len(everything)} jobs in {elapsed:.1f} s through a primary kill and "
          f"a 1,000-slot reshard; {len(before)} acknowledged before the kill, none lost")
