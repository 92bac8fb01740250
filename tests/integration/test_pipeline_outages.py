"""The pipeline through Redis outages: a broker killed mid-drain, and Redis down at submit.

Each test starts its own ``redis-server`` with AOF on (``appendfsync always``), so it can
SIGKILL and restart the broker without touching the shared test Redis.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from rookhaven.config import Settings
from rookhaven.errors import StoreUnavailableError
from rookhaven.pipeline import open_pipeline
from tests.conftest import ROOT, free_port, start_redis_server, wait_until
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

AOF = ("--appendonly", "yes", "--appendfsync", "always")


class Broker:
    """A private redis-server we may SIGKILL and restart on the same port and data."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.proc = start_redis_server(self.directory, self.port, *AOF)

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=10)
        self.proc = None

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(timeout=10)
            self.proc = None


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[Broker]:
    server = Broker(tmp_path)
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def env(broker: Broker) -> dict[str, str]:
    return environment(broker.url, "rh-outage", ROOKHAVEN_BATCH_SIZE="10")


@pytest.fixture
def workers(env: dict[str, str], tmp_path: Path) -> Iterator[WorkerFarm]:
    yield from farm(env, tmp_path)


@pytest.mark.slow
def test_after_the_broker_is_killed_and_restarted_the_sweeper_gets_every_job_done(
        broker: Broker, env: dict[str, str], workers: WorkerFarm) -> None:
    pipe = pipeline(env)
    pipe.add_corpus(documents(2000), "port")
    refs = pipe.submit_many(requests(3000), "port")
    ids = [r.job_id for r in refs]
    # Two workers, as in production: if the broker loss wedges one (a Celery 5.7 bug, see
    # workers/lifecycle.py), its heartbeat stops and the sweeper hands its jobs to the other.
    procs = [workers.start("w1", concurrency=1), workers.start("w2", concurrency=1)]
    wait_until(lambda: states(pipe, ids).get("done", 0) >= 300, 90,
               what="the workers to drain some jobs", interval=0.01)
    broker.kill()
    broker.start()  # same port, same AOF: everything acknowledged is back
    after_kill = states(pipe, ids)
    assert after_kill.get("done", 0) < len(ids), "drained everything before the kill"

    started = time.monotonic()

    def swept_and_done() -> bool:
        try:
            pipe.sweep(older_than=5)
        except StoreUnavailableError:
            return False
        return bool(all_done(pipe, ids))

    try:
        wait_until(swept_and_done, 150, interval=1.0, what="every job to be done after sweeping")
    except BaseException:
        for log in sorted(workers.logs.glob("w*.log")):
            print(f"--- {log.name} ---\n" + log.read_text(errors="replace")[-6000:])
        print("states:", states(pipe, ids), "live workers:", workers.instances())
        raise
    print(f"\nbroker killed at {after_kill}; all done {time.monotonic() - started:.1f} s later")
    assert sorted(done_events(pipe)) == sorted(ids)
    assert list(pipe.store.ledger.violations()) == []
    for ref in refs[:50]:
        assert pipe.result(ref.result_key)
    # A broker SIGKILL never ends a worker process (kombu's ack on a lost client, the
    # restore on channel close): both still run, and still take jobs.
    assert [p.poll() for p in procs] == [None, None]
    late = pipe.submit(requests(1, tag="after-")[0], "port")
    wait_until(lambda: all_done(pipe, [late.job_id]), 60, what="a job after the outage")


def test_redis_unreachable_at_submit_is_a_clear_error_and_writes_nothing(
        broker: Broker, env: dict[str, str]) -> None:
    pipe = pipeline(env)
    pipe.add_corpus(documents(20), "port")
    broker.kill()

    with pytest.raises(StoreUnavailableError, match=f"127.0.0.1:{broker.port}/0") as caught:
        pipe.submit(requests(1)[0], "port")
    assert "ROOKHAVEN_REDIS_URL" in str(caught.value)

    cli = subprocess.run([sys.executable, "-m", "rookhaven.cli.main", "submit", "--corpus",
                          "port", "--query", "crane delay"], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=60)
    assert cli.returncode == 1 and cli.stdout == ""
    assert "failed while" in cli.stderr and "Traceback" not in cli.stderr

    broker.start()
    client = redis.Redis.from_url(broker.url)
    keys = sorted(k.decode() for k in client.scan_iter(match="rh-outage:*"))
    assert not [k for k in keys if ":jobs:" in k or ":celery:rookhaven" in k or "ledger" in k]
    assert any(":corpus:" in k for k in keys)  # what was there before is intact
    client.close()


def test_a_submitter_with_no_redis_at_all_gets_the_same_clear_error() -> None:
    settings = Settings(redis_url=f"redis://127.0.0.1:{free_port()}/0", redis_timeout=1)
    with pytest.raises(StoreUnavailableError, match="check that the server is running"):
        open_pipeline(settings).submit(requests(1)[0], "latest")


def test_an_acl_user_confined_to_the_key_prefix_runs_the_whole_pipeline(
        tmp_path: Path) -> None:
    # The user may touch only keys under the prefix: proof that the store and kombu both
    # keep everything under it. The database number is honoured too.
    port = free_port()
    server = start_redis_server(tmp_path, port,
                                "--user", "rookhaven", "on", ">s3cret", "~rh-acl:*", "&*",
                                "+@all")
    try:
        url = f"redis://rookhaven:s3cret@127.0.0.1:{port}/3"
        env = environment(url, "rh-acl")
        pipe = pipeline(env)
        pipe.add_corpus(documents(30), "port")
        workers = WorkerFarm(env, tmp_path)
        try:
            workers.start("acl", concurrency=1)
            ref = pipe.submit(requests(1)[0], "port")
            wait_until(lambda: all_done(pipe, [ref.job_id]), 60, what="the job")
        finally:
            workers.stop_all()
        client = redis.Redis.from_url(url)
        assert client.exists(f"rh-acl:result:{ref.result_key}")
        assert not redis.Redis.from_url(url.replace("/3", "/0")).exists(
            f"rh-acl:result:{ref.result_key}")
        client.close()

        wrong = pipeline(environment(url.replace("s3cret", "nope"), "rh-acl"))
        with pytest.raises(StoreUnavailableError) as caught:
            wrong.submit(requests(1)[0], "port")
        assert "nope" not in str(caught.value) and "s3cret" not in str(caught.value)
    finally:
        server.terminate()
        server.wait(timeout=10)
