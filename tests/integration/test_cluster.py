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
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from rookhaven import Retriever, canonical_bytes
from rookhaven.config import Settings
from rookhaven.pipeline import Pipeline, RecordingDispatcher
from rookhaven.store import Store
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
from tests.mcp_support import StdioSession
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
                       # Each job's line (DEBUG) says which jobs a worker acknowledged.
                       ROOKHAVEN_LOG_LEVEL="debug")


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
    # Counted across every slot (a re-ranking run polls this way), a missing one too.
    assert pipe.store.results.count([*everything, "sha256:" + "0" * 64]) == len(everything)

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


def test_reads_and_writes_after_a_promotion_relearn_the_slots_a_dead_primary_held(
        nodes: ClusterNodes) -> None:
    """A client whose slot map still names the killed primary: its next pipeline read and
    job write wait for the promotion and go to the new primary, within ROOKHAVEN_REDIS_TIMEOUT,
    instead of failing against the dead node until the deadline."""
    settings = Settings(redis_url=nodes.url, key_prefix="rh-stale", redis_timeout=30,
                        engine="tfcosine@1")
    pipe = Pipeline(Store.from_settings(settings), RecordingDispatcher(), settings)
    pipe.add_corpus(documents(50), "port")
    ids = [r.job_id for r in pipe.submit_many(requests(200, tag="stale-"), "port")]
    # Held by the replicas before the kill (the same client, asking for one replica).
    Store(pipe.store.client, "rh-stale", min_replicas=1).replication.confirm("the records")
    assert pipe.store.jobs.states_many(ids) == ["queued"] * len(ids)  # the map is cached
    client = pipe.store.client
    held = {client.get_node_from_key(pipe.store.keys.shard(i).job_states).port for i in ids}
    victim = max(held & set(nodes.primaries()))
    nodes.kill(victim)
    killed = time.monotonic()
    assert pipe.store.jobs.states_many(ids) == ["queued"] * len(ids)
    assert time.monotonic() - killed < 30
    more = [r.job_id for r in pipe.submit_many(requests(50, tag="stale-after-"), "port")]
    assert pipe.store.jobs.states_many(more) == ["queued"] * len(more)


def test_a_chunk_whose_slot_moved_is_stored_again_whole_with_its_leaves(
        nodes: ClusterNodes) -> None:
    """A client whose slot map is stale sends a chunk's MSETNX and COMPLETE to the node that
    gave the slot away: MOVED at queueing aborts the transaction, nothing of it runs there,
    and it goes again whole through the cluster's own transaction to the slot's new node."""
    from redis.crc import key_slot

    from rookhaven.store.results import Offered
    from tests.results_support import AUDIT, framed

    store = Store.from_settings(Settings(redis_url=nodes.url, key_prefix="rh-moved"))
    key = "sha256:" + "c" * 64
    shard = store.keys.shard(key)
    slot = key_slot(shard.result(key).encode())
    client = store.client
    store.jobs.states_many([key])  # the client learns the slot map now
    source = client.get_node_from_key(shard.result(key)).port
    target = next(p for p in nodes.primaries() if p != source)
    # Move the slot (and any key in it) behind the client's back.
    nodes.begin_moving(slot, source, target)
    nodes.finish_moving(slot, source, target)
    assert client.get_node_from_key(shard.result(key)).port == source  # still stale

    transactions = []
    make = client.pipeline

    def counted(transaction: Any = None, shard_hint: Any = None) -> Any:
        transactions.append(bool(transaction))
        return make(transaction, shard_hint)

    client.pipeline = counted  # type: ignore[method-assign]
    result = framed(b"[1]")
    round_ = store.round()
    (reply,) = store.results.queue_put(round_, [Offered(key, "sha256:d", result, AUDIT)])
    round_.send("storing a chunk whose slot moved")
    assert reply.get() == "stored"
    assert True in transactions, "the chunk did not go again as a transaction"
    assert store.results.get(key) == result
    assert store.log_of(key).logged([key]) == [True]
    assert nodes.client(source).execute_command("CLUSTER", "COUNTKEYSINSLOT", slot) == 0


def test_a_chunk_whose_slot_is_migrating_is_stored_whole_once_the_slot_has_moved(
        nodes: ClusterNodes) -> None:
    """Mid-migration the node still owns the slot and holds the job's record but not the
    chunk's new keys: its MSETNX is sent elsewhere (ASK) and its COMPLETE told to try again
    (TRYAGAIN); the transaction runs none of it there and goes again whole, through the
    cluster's transaction, until the slot has moved."""
    from redis.crc import key_slot

    from rookhaven.store.results import Offered

    settings = Settings(redis_url=nodes.url, key_prefix="rh-ask", redis_timeout=30,
                        engine="tfcosine@1")
    pipe = Pipeline(Store.from_settings(settings), RecordingDispatcher(), settings)
    pipe.add_corpus(documents(20), "port")
    request = requests(1, tag="ask-")[0]
    (job,) = pipe.submit_many([request], "port")
    store, client = pipe.store, pipe.store.client
    shard = store.keys.shard(job.job_id)
    slot = key_slot(shard.job_states.encode())
    source = client.get_node_from_key(shard.job_states).port
    target = next(p for p in nodes.primaries() if p != source)
    nodes.begin_moving(slot, source, target)
    make = client.pipeline
    transactions = []

    def pipeline_then_finish(transaction: Any = None, shard_hint: Any = None) -> Any:
        if transaction and not transactions:  # the aborted chunk goes again: migration ends
            transactions.append(True)
            nodes.finish_moving(slot, source, target)
        return make(transaction, shard_hint)

    client.pipeline = pipeline_then_finish  # type: ignore[method-assign]
    retriever = Retriever(documents(20), "tfcosine@1")
    result = retriever.retrieve(request)
    round_ = store.round()
    (reply,) = store.results.queue_put(round_, [Offered(
        job.result_key, job.corpus_digest, canonical_bytes(result),
        canonical_bytes(result.audit))])
    round_.send("storing a chunk whose slot is migrating")
    assert reply.get() == "done"
    assert transactions, "the chunk never went again as a transaction"
    assert store.jobs.states_many([job.job_id]) == ["done"]
    assert store.results.get(job.result_key) == canonical_bytes(result)
    assert store.log_of(job.result_key).logged([job.result_key]) == [True]


RIDE_JOBS = int(os.environ.get("ROOKHAVEN_TEST_CLUSTER_RIDE_JOBS", "6000"))


@pytest.fixture
def durable_nodes(tmp_path: Path) -> Iterator[ClusterNodes]:
    """As the issue's operator ran it: AOF fsynced at every write, a 2 s node timeout."""
    yield from cluster(tmp_path / "cluster", options=(
        "--cluster-node-timeout", "2000", "--appendonly", "yes", "--appendfsync", "always"))


@pytest.mark.slow
@pytest.mark.parametrize("min_replicas", [1, 0])
def test_every_client_rides_through_a_primary_killed_while_a_submit_enqueues(
        durable_nodes: ClusterNodes, broker_url: str, tmp_path: Path,
        min_replicas: int) -> None:
    """Issue 55's run: ``submit --requests --wait`` of 6,000 jobs is enqueuing, an MCP server
    and ``verify --all`` run, when a primary whose last writes reached no replica is
    SIGKILLed; its replica is promoted, a new node joins as that one's replica, the dead node
    is forgotten, 500 slots are resharded. Nothing is restarted and every client exits 0
    with every result: writes a failover took are made again (by the submitter, the workers,
    the sweeper), never acknowledged as held."""
    nodes = durable_nodes
    env = environment(nodes.url, f"rh-ride{min_replicas}", ROOKHAVEN_BROKER_URL=broker_url,
                      ROOKHAVEN_BATCH_SIZE="50", ROOKHAVEN_REDIS_MIN_REPLICAS=str(min_replicas),
                      ROOKHAVEN_REDIS_REPLICA_TIMEOUT="1", ROOKHAVEN_REDIS_TIMEOUT="120",
                      ROOKHAVEN_SWEEP_INTERVAL="2", ROOKHAVEN_LOG_LEVEL="warning")
    (tmp_path / "logs").mkdir()
    farmed = farm(env, tmp_path / "logs")
    workers = next(farmed)
    server = None
    try:
        pipe = pipeline(env)
        docs = documents(800)
        pipe.add_corpus(docs, "port")
        workers.start("r1", concurrency=1, beat=True)
        workers.start("r2", concurrency=1)
        warm = requests(100, tag="warm-")
        warm_ids = [r.job_id for r in pipe.submit_many(warm, "port")]
        wait_until(lambda: all_done(pipe, warm_ids), 120, what="the first 100 jobs done")
        (tmp_path / "before.cp").write_text(checkpoints.sign_now(pipe.store, PRIVATE))

        batch = requests(RIDE_JOBS, tag="ride-")
        lines = tmp_path / "requests.jsonl"
        lines.write_text("".join(r.model_dump_json(by_alias=True) + "\n" for r in batch))
        ids, out = tmp_path / "ids.txt", tmp_path / "results.jsonl"
        # A write waits for a replica (MIN_REPLICAS=1) until the operator adds one.
        server = StdioSession({**env, "ROOKHAVEN_LOG_LEVEL": "warning"}, timeout=180)
        server.initialize()
        with ids.open("wb") as printed:
            submit = subprocess.Popen(
                [sys.executable, "-m", "rookhaven.cli.main", "submit", "--corpus", "port",
                 "--requests", str(lines), "--wait", "--timeout", "900", "--out", str(out)],
                cwd=ROOT, env=env, stdout=printed, stderr=subprocess.PIPE, text=True)
        seen = _Watch(ids)
        wait_until(lambda: seen.count() >= 1000, 300, what="1,000 jobs enqueued")

        named = {int(part.rsplit(":", 1)[1]) for part in nodes.url.split("//")[1].split(",")}
        primaries = nodes.primaries()
        victim = max(set(primaries) - named or set(primaries))
        # The victim's last writes reach no replica: records and results it accepted (and,
        # at MIN_REPLICAS=0, acknowledged) die with it, as a busy primary's last ones do.
        # At MIN_REPLICAS=0 the workers are frozen meanwhile, so the writes the replica never
        # sees hold records of jobs not yet run: the failover surely takes some, whose jobs
        # the waiting submitter must record again (workers that kept up would leave each
        # lost record's result stored, and nothing to record again).
        idle = [] if min_replicas else workers.procs
        for proc in idle:
            os.killpg(proc.pid, signal.SIGSTOP)
        try:
            frozen, cut_at = nodes.cut_replication(victim), nodes.offset(victim)
            wait_until(lambda: nodes.offset(victim) > cut_at + 20_000, 60,
                       what="writes the replica never saw")
            killed = time.monotonic()
            nodes.kill(victim)
            nodes.resume(frozen)
        finally:
            for proc in idle:
                os.killpg(proc.pid, signal.SIGCONT)
        at_kill = seen.count()
        assert at_kill < RIDE_JOBS, "the kill must land while the submit enqueues"
        operator = _Operator(nodes, victim, primaries[victim], killed)
        verify = subprocess.Popen(
            [sys.executable, "-m", "rookhaven.cli.main", "verify", "--all", "--json",
             "--checkpoint", str(tmp_path / "before.cp"), "--verifier-key", VERIFIER],
            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        # Sent while the cluster heals; each is answered, none with an error.
        stored = _tool(server, "retrieve", {"query": warm[0].query, "corpus": "port",
                                            "recallBudget": warm[0].recall_budget,
                                            "seed": warm[0].seed})
        assert stored["metadata"]["reason"] == "result already stored", stored
        answered = time.monotonic() - killed
        job = _tool(server, "submit_retrieval", {"query": "tide pilot and berth",
                                                 "corpus": "port", "seed": "during"})
        accepted = time.monotonic() - killed

        _, stderr = submit.communicate(timeout=1200)
        finished = time.monotonic() - killed
        assert submit.returncode == 0, stderr[-3000:]
        assert "Traceback" not in stderr
        # The writes the kill took were made again, not acknowledged as held: a batch
        # confirmed by the promoted primary is recorded again (MIN_REPLICAS=1); records the
        # failover took are recorded again by the waiting submitter (MIN_REPLICAS=0).
        assert ("writing again" if min_replicas else "recording them again") in stderr, stderr
        operator.join()
        verified, verify_err = verify.communicate(timeout=600)
        assert verify.returncode == 0, verified[-2000:] + verify_err[-2000:]
        run = json.loads(verified)
        assert run["alarms"] == 0 and run["matched"] == run["checked"] >= len(warm)

        inline = Retriever(docs, pipe.settings.engine)
        assert out.read_bytes().splitlines() == [canonical_bytes(inline.retrieve(r))
                                                 for r in batch]
        wait_until(lambda: _tool(server, "get_job", {"jobId": job["job_id"]})["state"]
                   == "done", 300, what="the job submitted through MCP during the failover")
        assert server.close() == 0
        server = None
        # One sweep after it all finds nothing left open: no job stalled by the failover.
        swept = subprocess.run([sys.executable, "-m", "rookhaven.cli.main", "sweep"], cwd=ROOT,
                               env=env, capture_output=True, text=True, timeout=300)
        assert swept.returncode == 0, swept.stderr[-2000:]
        assert pipe.store.jobs.counts() == {"queued": 0, "running": 0}
        first_write = seen.first_after(killed, at_kill)
        print(f"\ncluster ride-through at MIN_REPLICAS={min_replicas}: promoted "
              f"{operator.promoted:.1f} s after the kill, replica joined {operator.replica:.1f} "
              f"s, first write accepted {first_write:.1f} s, MCP read answered {answered:.1f} "
              f"s, MCP submit {accepted:.1f} s, {RIDE_JOBS} jobs done {finished:.1f} s; "
              f"{at_kill} enqueued at the kill; submit said: {stderr.strip()[-600:]!r}")
    finally:
        if server is not None:
            server.close()
        next(farmed, None)


class _Watch:
    """The submit's printed job ids, counted by a thread, with when each count was seen."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.seen: list[tuple[float, int]] = []
        self._stop = threading.Event()
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self) -> None:
        while not self._stop.wait(0.05):
            count = self.path.read_bytes().count(b"\n")
            if not self.seen or self.seen[-1][1] != count:
                self.seen.append((time.monotonic(), count))

    def count(self) -> int:
        return self.seen[-1][1] if self.seen else 0

    def first_after(self, since: float, count: int) -> float:
        """Seconds from ``since`` to the first count above ``count`` (-1: none)."""
        return next((at - since for at, n in self.seen if n > count), -1.0)


class _Operator(threading.Thread):
    """The runbook's steps after a primary dies, in the background as an operator works."""

    def __init__(self, nodes: ClusterNodes, victim: int, victim_id: str,
                 killed: float) -> None:
        super().__init__(daemon=True)
        self.nodes, self.victim, self.victim_id, self.killed = nodes, victim, victim_id, killed
        self.promoted = self.replica = -1.0
        self.error: BaseException | None = None
        self.start()

    def run(self) -> None:
        try:
            nodes = self.nodes
            # Promoted: a primary without a replica (the dead one's), every slot served.
            wait_until(lambda: [p for p in nodes.primaries() if not nodes.replicas_of(p)]
                       and nodes.healthy(), 60, what="the killed primary's replica promoted")
            self.promoted = time.monotonic() - self.killed
            nodes.replace(self.victim)
            wait_until(lambda: all(nodes.replicas_of(p) for p in nodes.primaries()), 60,
                       what="every primary to have a replica again")
            self.replica = time.monotonic() - self.killed
            nodes.forget(self.victim_id)
            source, target = sorted(nodes.primaries().values())[:2]
            moved = nodes.reshard(source, target, 500)
            assert moved.returncode == 0, moved.stdout[-2000:] + moved.stderr[-2000:]
        except BaseException as exc:  # re-raised in the test's thread by join()
            self.error = exc

    def join(self, timeout: float | None = 600) -> None:
        super().join(timeout)
        assert not self.is_alive(), "the operator's steps did not finish"
        if self.error is not None:
            raise self.error


def _tool(server: StdioSession, name: str, arguments: dict[str, Any]) -> Any:
    reply = server.request("tools/call", {"name": name, "arguments": arguments})
    result = reply["result"]
    assert not result.get("isError"), result
    return result["structuredContent"]
