"""Real ``celery -A workers worker`` processes for the pipeline's integration tests.

Each worker runs in its own session so a test can SIGKILL the whole worker (main process
and pool children) the way a lost machine or the OOM killer would. Every wait is on a
condition (heartbeat keys, job states), bounded; teardown kills whatever is left.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import redis

from rookhaven import Document, RetrievalRequest
from rookhaven.config import Settings
from rookhaven.pipeline import Pipeline, open_pipeline
from rookhaven.store.connection import connect
from tests import kernelcache
from tests.conftest import ROOT, stop_groups, wait_until

# Short limits so recovery paths run in seconds; the relations the settings check still hold.
FAST = {
    "ROOKHAVEN_TASK_TIME_LIMIT": "10",
    "ROOKHAVEN_VISIBILITY_TIMEOUT": "15",
    "ROOKHAVEN_SWEEP_AFTER": "15",
    "ROOKHAVEN_SWEEP_INTERVAL": "1",
    "ROOKHAVEN_WORKER_HEARTBEAT": "2",
    "ROOKHAVEN_UNACKED_RESTORE_INTERVAL": "1",
    "ROOKHAVEN_REDIS_TIMEOUT": "2",
    "ROOKHAVEN_LOG_LEVEL": "warning",
}

WORDS = ["crane", "berth", "tide", "delay", "pilot", "tug", "cargo", "manifest", "customs",
         "reefer", "gantry", "quay", "draft", "ballast", "mooring", "lashing", "inspection",
         "hazard", "container", "vessel"]


def documents(n: int = 300) -> list[Document]:
    """A synthetic port-operations corpus with overlapping vocabulary (so ties happen)."""
    return [Document(id=f"doc-{i:04d}",
                     text=" ".join(WORDS[(i * k + k * k) % len(WORDS)] for k in range(1, 9)),
                     fields={"title": f"{WORDS[i % len(WORDS)]} report {i % 13}"})
            for i in range(n)]


def requests(n: int, tag: str = "") -> list[RetrievalRequest]:
    """``n`` distinct requests: different queries, seeds and budgets."""
    return [RetrievalRequest(
        query=f"{WORDS[i % 20]} {WORDS[(i * 7 + 3) % 20]} and {WORDS[(i * 3 + 1) % 20]}",
        recallBudget=1 + i % 12, seed=f"{tag}seed-{i}") for i in range(n)]


def environment(url: str, prefix: str, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ROOKHAVEN_")}
    env.update(FAST, ROOKHAVEN_REDIS_URL=url, ROOKHAVEN_KEY_PREFIX=prefix,
               ROOKHAVEN_KERNEL_WARMUP=kernelcache.warmup_setting(), **extra)
    return env


def pipeline(env: Mapping[str, str]) -> Pipeline:
    """A Pipeline configured exactly as the workers started with ``env``."""
    return open_pipeline(Settings.from_mapping(env))


class WorkerFarm:
    """Starts, kills and finally reaps worker processes for one test."""

    def __init__(self, env: dict[str, str], logs: Path) -> None:
        self.env = env
        self.logs = logs
        self.procs: list[subprocess.Popen[bytes]] = []
        self.client = connect(env["ROOKHAVEN_REDIS_URL"])  # a sentinel:// URL too
        self.prefix = env["ROOKHAVEN_KEY_PREFIX"]

    def instances(self) -> set[str]:
        """Worker instances whose heartbeat key is present."""
        try:
            return {k.decode() for k in
                    self.client.scan_iter(match=f"{self.prefix}:worker:*", count=1000)}
        except redis.RedisError:
            return set()

    def start(self, name: str, concurrency: int = 2, beat: bool = False,
              timeout: float = 60, app: str = "workers",
              wait: bool = True) -> subprocess.Popen[bytes]:
        """Start a worker of ``app`` and (with ``wait``) wait until its heartbeat shows it
        consuming."""
        before = self.instances()
        command = [sys.executable, "-m", "celery", "-A", app, "worker",
                   "-n", f"{name}@%h", "-c", str(concurrency), "-O", "fair", "-l", "warning",
                   "--without-gossip", "--without-mingle", "--without-heartbeat"]
        env = dict(self.env)
        if beat:
            command.append("-B")
            env["ROOKHAVEN_BEAT_SCHEDULE_FILE"] = str(self.logs / f"{name}-beat")
        log = (self.logs / f"{name}.log").open("ab")
        proc = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=log,
                                start_new_session=True)
        self.procs.append(proc)
        if not wait:
            return proc
        wait_until(lambda: proc.poll() is not None or self.instances() - before, timeout,
                   what=f"worker {name} to start")
        assert proc.poll() is None, f"worker {name} exited: see {self.logs / (name + '.log')}"
        return proc

    def kill(self, proc: subprocess.Popen[bytes]) -> None:
        """SIGKILL the whole worker: main process and every pool child."""
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)

    def stop_all(self) -> None:
        stop_groups(self.procs, timeout=15)  # pool children too, not only the main process
        self.client.close()


def farm(env: dict[str, str], logs: Path) -> Iterator[WorkerFarm]:
    workers = WorkerFarm(env, logs)
    try:
        yield workers
    finally:
        workers.stop_all()


def states(pipe: Pipeline, job_ids: list[str]) -> dict[str, int]:
    """How many of ``job_ids`` are in each state (absent records count as 'missing')."""
    counts: dict[str, int] = {}
    for record in pipe.store.jobs.get_many(job_ids):
        state = record.state if record else "missing"
        counts[state] = counts.get(state, 0) + 1
    return counts


def done_events(pipe: Pipeline) -> dict[str, int]:
    """How many times the ledger recorded each job as done."""
    counts: dict[str, int] = {}
    for event in pipe.store.ledger.events():
        if event.event == "done":
            counts[event.job] = counts.get(event.job, 0) + 1
    return counts


def all_done(pipe: Pipeline, job_ids: list[str]) -> Any:
    return states(pipe, job_ids).get("done", 0) == len(job_ids)
