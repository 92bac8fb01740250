"""High availability on real Redis Sentinel: the primary SIGKILLed while jobs drain.

A primary, a replica and three Sentinels (``tests/integration/sentinels.py``); two real
Celery workers (one with beat), the submitter, the verifier and the CLI all on the
``sentinel://`` URL, with ``ROOKHAVEN_REDIS_MIN_REPLICAS=1``. After the failover every job
is done with the bytes the inline core gives, and every job a worker acknowledged before
the kill (its ``done`` log line, written only after WAIT confirmed the replica) is on the
new primary, with its ledger event from before the kill.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from rookhaven import Retriever, canonical_bytes
from rookhaven.errors import ReplicationError
from rookhaven.pipeline import QUEUE
from rookhaven.store import Store
from rookhaven.store.connection import connect
from tests.conftest import ROOT, wait_until
from tests.integration.sentinels import SentinelTopology, submitted, topology
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

JOBS = 1200


@pytest.fixture
def nodes(tmp_path: Path) -> Iterator[SentinelTopology]:
    yield from topology(tmp_path / "redis")


@pytest.fixture
def env(nodes: SentinelTopology) -> dict[str, str]:
    return environment(nodes.url, "rh-sentinel", ROOKHAVEN_BATCH_SIZE="4",
                       ROOKHAVEN_REDIS_MIN_REPLICAS="1", ROOKHAVEN_REDIS_REPLICA_TIMEOUT="1",
                       # Each job's line (DEBUG) says which jobs a worker acknowledged.
                       ROOKHAVEN_LOG_LEVEL="debug")


@pytest.fixture
def workers(env: dict[str, str], tmp_path: Path) -> Iterator[WorkerFarm]:
    (tmp_path / "logs").mkdir()
    yield from farm(env, tmp_path / "logs")


def acknowledged(logs: Path, sizes: dict[Path, int]) -> set[str]:
    """Jobs whose 'done' line a worker wrote within the first ``sizes[file]`` bytes."""
    done = set()
    for path, size in sizes.items():
        for line in path.read_bytes()[:size].splitlines():
            if line.startswith(b"{"):
                entry = json.loads(line)
                if entry.get("state") == "done" and "job" in entry:
                    done.add(entry["job"])
    return done


@pytest.mark.slow
def test_a_primary_killed_while_jobs_drain_loses_no_acknowledged_result(
        nodes: SentinelTopology, env: dict[str, str], workers: WorkerFarm,
        tmp_path: Path) -> None:
    pipe = pipeline(env)
    docs = documents(1500)
    digest = pipe.add_corpus(docs, "port").digest
    first, later = requests(JOBS), requests(100, tag="after-")
    server = StdioSession({**env, "ROOKHAVEN_LOG_LEVEL": "warning"})  # lives through it all
    server.initialize()
    # Every job queued before the workers start, and neither start waited for: with workers
    # running, a slow submitter (a replica confirmed every batch, on a loaded machine) was
    # matched job for job, or the first worker drained the queue while the second started,
    # and nothing was left to drain when the kill could land.
    ids = [r.job_id for r in pipe.submit_many(first, "port")]
    assert _tool(server, "get_job", {"jobId": ids[0]})["job_id"] == ids[0]
    started = [workers.start("w1", concurrency=1, beat=True, wait=False),
               workers.start("w2", concurrency=1, wait=False)]
    # One ZCARD per poll: polling 1,200 job states would slow the drain it waits on.
    wait_until(lambda: pipe.store.audits.count(corpus=digest) >= 60, 120, what="60 jobs done")
    assert all(proc.poll() is None for proc in started), "a worker exited: see its log"

    old_primary = nodes.ports["primary"]
    logs = sorted((tmp_path / "logs").glob("*.log"))
    sizes = {path: path.stat().st_size for path in logs}
    killed = nodes.kill("primary")
    before = acknowledged(tmp_path / "logs", sizes)
    assert 0 < len(before) < JOBS, "the kill must land while jobs drain"

    wait_until(lambda: nodes.primary_port() not in (None, old_primary), 60,
               what="the Sentinels to promote the replica")
    failover = time.monotonic() - killed

    # Acknowledged before the kill, so the replica held them before it was promoted.
    promoted = Store(nodes.node("replica"), "rh-sentinel")
    held = [r is not None for r in promoted.results.get_many(sorted(before))]
    assert all(held), f"{held.count(False)} acknowledged results lost in the failover"

    # With MIN_REPLICAS=1 nothing is acknowledged while the new primary has no replica:
    # the lost host comes back (empty) and the Sentinels make it one.
    nodes.restart("primary")
    wait_until(lambda: nodes.replica_of_primary("primary"), 60,
               what="the returned host to replicate the new primary")

    # The same submitter, without a restart, on the new primary.
    more = wait_until(lambda: submitted(pipe, later), 60, what="a submission after failover")
    everything = ids + [r.job_id for r in more]
    wait_until(lambda: all_done(pipe, everything), 240,
               what=f"all {len(everything)} jobs done after the failover")
    recovered = time.monotonic() - killed

    # The MCP server started before the kill reads from the new primary, not restarted.
    fetched = _tool(server, "get_result", {"resultKey": more[-1].job_id})
    assert fetched["result_key"] == more[-1].job_id and fetched["hits"]
    assert server.close() == 0

    inline = Retriever(docs, pipe.settings.engine)
    for request, job_id in zip(first + later, everything, strict=True):
        assert pipe.result(job_id) == canonical_bytes(inline.retrieve(request))
    events = {e.job: e for e in pipe.store.ledger.events() if e.event == "done"}
    assert before <= set(events)

    verify = subprocess.run(
        [sys.executable, "-m", "rookhaven.cli.main", "verify", "--all", "--json"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert verify.returncode == 0, verify.stderr[-2000:]
    run = json.loads(verify.stdout)
    assert run["checked"] == len(everything) and run["matched"] == len(everything)
    print(f"\nfailover: new primary {failover:.1f} s after the SIGKILL; "
          f"all {len(everything)} jobs done {recovered:.1f} s after it; "
          f"{len(before)} acknowledged before the kill, none lost")


def _tool(server: StdioSession, name: str, arguments: dict[str, Any]) -> Any:
    reply = server.request("tools/call", {"name": name, "arguments": arguments})
    result = reply["result"]
    assert not result.get("isError"), result
    return result["structuredContent"]


def test_a_write_no_replica_confirms_is_refused_and_retried(
        nodes: SentinelTopology, env: dict[str, str]) -> None:
    nodes.kill("replica")
    # Each WAIT lasts 0.2 s; they are repeated for ROOKHAVEN_REDIS_TIMEOUT before refusing.
    pipe = pipeline({**env, "ROOKHAVEN_REDIS_REPLICA_TIMEOUT": "0.2",
                     "ROOKHAVEN_REDIS_TIMEOUT": "1.5"})
    began = time.monotonic()
    with pytest.raises(ReplicationError, match=r"only 0 of the 1 replicas required by "
                       r"ROOKHAVEN_REDIS_MIN_REPLICAS confirmed storing corpus sha256:"):
        pipe.add_corpus(documents(20), "port")
    assert time.monotonic() - began >= 1.5, "refused at the first WAIT, not retried"
    zero = pipeline({**env, "ROOKHAVEN_REDIS_MIN_REPLICAS": "0"})
    zero.add_corpus(documents(20), "port")
    with pytest.raises(ReplicationError, match=r"confirmed recording 1 job\(s\) within 1.5 s "
                       r"\(ROOKHAVEN_REDIS_TIMEOUT; each WAIT 0.2 s, ROOKHAVEN_REDIS_REPLICA_"
                       r"TIMEOUT\): the primary of Sentinel service"):
        pipe.submit(requests(1)[0], "port")


def test_a_pipeline_whose_primary_dies_under_it_follows_the_promotion(
        nodes: SentinelTopology) -> None:
    # The pipeline loses its connection mid-command and reconnects inside its own retry:
    # that reconnect must ask the Sentinels again, not dial the dead primary's address for
    # the whole timeout (redis-py issue 3874).
    client = connect(nodes.url, timeout=30)
    client.set("before", b"1")
    replies: list[Any] = []

    def blocked() -> None:
        pipe = client.pipeline(transaction=False)
        pipe.blpop(["nothing-to-pop"], timeout=2)
        pipe.set("after", b"2")
        replies.extend(pipe.execute())

    worker = threading.Thread(target=blocked)
    worker.start()
    wait_until(lambda: nodes.node("primary").info("clients")["blocked_clients"] > 0, 10,
               what="the pipeline blocked on the primary", interval=0.01)
    nodes.kill("primary")
    began = time.monotonic()
    worker.join(timeout=40)
    took = time.monotonic() - began
    assert replies == [None, True], "the pipeline did not complete on the new primary"
    assert nodes.primary_port() == nodes.ports["replica"]
    assert client.get("after") == b"2"
    # A promotion (1.5 s down-after here) and the BLPOP again, not the 30 s of retries.
    assert took < 15, f"the pipeline took {took:.1f} s to follow the promotion"


@pytest.mark.slow
def test_a_worker_does_not_acknowledge_a_job_until_a_replica_holds_it(
        nodes: SentinelTopology, env: dict[str, str], workers: WorkerFarm,
        tmp_path: Path) -> None:
    trusting = pipeline({**env, "ROOKHAVEN_REDIS_MIN_REPLICAS": "0"})
    trusting.add_corpus(documents(50), "port")
    nodes.kill("replica")
    workers.start("w1", concurrency=1)
    job = trusting.submit(requests(1)[0], "port").job_id
    log = tmp_path / "logs" / "w1.log"

    def lines(state: str) -> int:
        return sum(1 for line in log.read_bytes().splitlines() if line.startswith(b"{")
                   and json.loads(line).get("job") == job and json.loads(line)["state"] == state)

    # Computed and stored on the primary, but not acknowledged: redelivered, waiting again.
    wait_until(lambda: lines("skipped:done:unconfirmed") >= 2, 60,
               what="the job to come back unacknowledged")
    assert lines("done:unconfirmed") == 1 and lines("done") == 0
    assert trusting.job(job).state == "done"

    nodes.restart("replica", "--replicaof", "127.0.0.1", str(nodes.ports["primary"]))
    wait_until(lambda: lines("skipped:done") >= 1, 60, what="the job acknowledged")
    primary = nodes.node("primary")
    wait_until(lambda: primary.llen(f"rh-sentinel:celery:{QUEUE}") == 0
               and primary.hlen("rh-sentinel:celery:unacked") == 0, 30,
               what="no message left in the queue or unacknowledged")


@pytest.mark.slow
def test_submit_and_wait_started_at_the_kill_rides_through_the_failover(
        nodes: SentinelTopology, tmp_path: Path) -> None:
    # Every process waits out the failover (ROOKHAVEN_REDIS_TIMEOUT), none is restarted.
    env = environment(nodes.url, "rh-ride", ROOKHAVEN_REDIS_TIMEOUT="30",
                      ROOKHAVEN_BATCH_SIZE="4", ROOKHAVEN_LOG_LEVEL="warning")
    (tmp_path / "logs").mkdir()
    farmed = farm(env, tmp_path / "logs")
    workers = next(farmed)
    try:
        pipe = pipeline(env)
        docs = documents(300)
        pipe.add_corpus(docs, "port")
        workers.start("w1", concurrency=2)
        batch = requests(400, tag="ride-")
        lines = tmp_path / "requests.jsonl"
        lines.write_text("".join(r.model_dump_json(by_alias=True) + "\n" for r in batch))
        out = tmp_path / "results.jsonl"
        old_primary = nodes.ports["primary"]
        nodes.kill("primary")
        submit = subprocess.Popen(
            [sys.executable, "-m", "rookhaven.cli.main", "submit", "--corpus", "port",
             "--requests", str(lines), "--wait", "--timeout", "240", "--out", str(out)],
            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        # An MCP server and a second worker, both started while no primary exists.
        server = StdioSession({**env, "ROOKHAVEN_LOG_LEVEL": "warning"})
        server.initialize()
        assert [c["name"] for c in _tool(server, "list_corpora", {})["corpora"]] == ["port@1"]
        workers.start("w2", concurrency=1)
        _, stderr = submit.communicate(timeout=300)
        assert submit.returncode == 0, stderr[-2000:]
        assert server.close() == 0
        assert nodes.primary_port() not in (None, old_primary)
        inline = Retriever(docs, pipe.settings.engine)
        stored = out.read_bytes().splitlines()
        assert stored == [canonical_bytes(inline.retrieve(r)) for r in batch]
        assert "Traceback" not in stderr
    finally:
        next(farmed, None)
