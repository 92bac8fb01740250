"""Chaos: connection losses and failovers at random moments, on one Redis, on Sentinel and
on a 3+3 cluster, while ``rookhaven submit --requests --wait`` runs round after round.

Every round's submit exits 0 with its default timeout, every job is done within the
recovery bound after the connection is back (ops/runbook.md), none is lost, and every
result is the inline core's bytes. A longer storm by hand:
``ROOKHAVEN_TEST_CHAOS=30 python -m pytest -s tests/integration/test_chaos.py``.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from rookhaven import Retriever, canonical_bytes
from rookhaven.errors import StoreUnavailableError
from rookhaven.pipeline import Pipeline
from rookhaven.store import JobRecord
from tests.conftest import ROOT
from tests.integration.chaos import (
    BOUND,
    RECOVERY,
    Topology,
    one_redis,
    redis_cluster,
    sentinels,
)
from tests.integration.workerfarm import documents, environment, farm, pipeline, requests

EVENTS = int(os.environ.get("ROOKHAVEN_TEST_CHAOS", "10"))  # per topology
JOBS = 200  # a round's requests
MOMENTS = ("submitting", "running", "completing")


@pytest.fixture(params=["redis", "sentinel", "cluster"])
def servers(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Topology]:
    rng = random.Random(f"chaos-{request.param}")
    if request.param == "redis":
        yield from one_redis(tmp_path / "redis")
    elif request.param == "sentinel":
        yield from sentinels(tmp_path / "sentinel")
    else:
        yield from redis_cluster(tmp_path / "servers", rng)


def _states(pipe: Pipeline, ids: list[str]) -> Counter[str | None]:
    try:
        return Counter(pipe.store.jobs.states_many(ids))
    except StoreUnavailableError:  # mid-failover: nothing seen this time
        return Counter()


def _moment(pipe: Pipeline, ids: list[str], wanted: str, submit: subprocess.Popen[str],
            deadline: float) -> str:
    """Wait for the moment ``wanted`` in this round (or the nearest one that comes): the
    moment seen when it returns."""
    last_done = None
    while time.monotonic() < deadline:
        seen = _states(pipe, ids)
        recorded = len(ids) - seen[None]
        if submit.poll() is not None:
            return "after the submit"
        if wanted == "submitting" and 0 < recorded < len(ids):
            return "submitting"
        if wanted == "running" and seen["running"]:
            return "running"
        if wanted == "completing" and seen["running"] and last_done not in (None, seen["done"]):
            return "completing"  # a chunk was just stored, the next ones run
        last_done = seen["done"]
        time.sleep(0.005)
    return "after the submit"


def _done_by(pipe: Pipeline, ids: list[str], deadline: float, what: str) -> list[JobRecord]:
    """Every job's record once all are done; fails saying their states if they are not by
    ``deadline`` (``time.time()``, the clock jobs are stamped with)."""
    while True:
        try:
            records = pipe.store.jobs.get_many(ids)
        except StoreUnavailableError:
            records = []
        if records and all(r is not None and r.state == "done" for r in records):
            return [r for r in records if r is not None]
        if time.time() > deadline:
            seen = Counter(r.state if r else "missing" for r in records)
            pytest.fail(f"{what}: not every job done by the bound ({BOUND:g} s): {dict(seen)}")
        time.sleep(0.1)


@pytest.mark.slow
def test_chaos_leaves_every_job_done_once_within_the_bound_with_the_inline_bytes(
        servers: Topology, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    topology = request.node.callspec.params["servers"]
    rng = random.Random(f"moments-{topology}")
    extra = {"ROOKHAVEN_BROKER_URL": servers.broker} if servers.broker else {}
    env = environment(servers.url, f"rh-chaos-{topology}", **RECOVERY, **extra,
                      ROOKHAVEN_REDIS_MIN_REPLICAS=str(servers.min_replicas),
                      ROOKHAVEN_REDIS_REPLICA_TIMEOUT="1", ROOKHAVEN_LOG_LEVEL="error")
    (tmp_path / "logs").mkdir()
    farmed = farm(env, tmp_path / "logs")
    workers = next(farmed)
    try:
        pipe = pipeline(env)
        docs = documents(300)
        digest = pipe.add_corpus(docs, "port").digest
        fired: Counter[tuple[str, str]] = Counter()
        slowest, everything = 0.0, []
        for round_ in range(EVENTS):
            batch = requests(JOBS, tag=f"{topology}-{round_}-")
            ids = [pipe.spec(r, digest).key for r in batch]
            lines = tmp_path / f"round-{round_}.jsonl"
            lines.write_text("".join(r.model_dump_json(by_alias=True) + "\n" for r in batch))
            if round_ == 0:  # the workers start with the submit: no sweep has run yet
                workers.start("w1", concurrency=2, beat=True, wait=False)
            submit = subprocess.Popen(
                [sys.executable, "-m", "rookhaven.cli.main", "submit", "--corpus", "port",
                 "--requests", str(lines), "--wait"],
                cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            event = rng.choice(servers.events)
            moment = ("before the first sweep" if round_ == 0 else
                      _moment(pipe, ids, rng.choice(MOMENTS), submit, time.monotonic() + 30))
            servers.fire(event)
            servers.ready()
            back = time.time()
            fired[(event, moment)] += 1
            _, stderr = submit.communicate(timeout=300)
            assert submit.returncode == 0, f"{event} {moment}: {stderr[-2000:]}"
            # The submit's last reads may come from a primary about to be demoted (a planned
            # failover's seconds of two primaries), so the store itself must show every job
            # done, within the bound, as the failure says if not.
            records = _done_by(pipe, ids, back + BOUND,
                               f"round {round_} ({event} {moment})")
            finished = max(r.finished or 0.0 for r in records)
            slowest = max(slowest, finished - back)
            assert finished - back <= BOUND, (
                f"round {round_} ({event} {moment}): the last job was done "
                f"{finished - back:.1f} s after the connection was back (bound {BOUND:g} s)")
            everything += list(zip(batch, ids, strict=True))
        inline = Retriever(docs, pipe.settings.engine)
        stored = pipe.store.results.get_many([job_id for _, job_id in everything])
        lost = [(at // JOBS, job_id) for at, ((_, job_id), result)
                in enumerate(zip(everything, stored, strict=True)) if result is None]
        if lost:
            record = pipe.store.jobs.get_many([lost[0][1]])[0]
            events = [e for e in pipe.store.ledger.events() if e.job == lost[0][1]]
            raise AssertionError(f"{len(lost)} results gone, first of round {lost[0][0]} "
                                 f"({list(fired.elements())}): {record} {events}")
        for request_, job_id in everything:
            assert pipe.result(job_id) == canonical_bytes(inline.retrieve(request_))
        assert list(pipe.store.ledger.violations()) == []  # no key offered other bytes
        kinds = Counter(event for event, _ in fired.elements())
        moments = Counter(moment for _, moment in fired.elements())
        print(f"\n{topology}: {EVENTS} events {dict(kinds)} at {dict(moments)}; "
              f"{len(everything)} jobs, all done with the inline bytes; the slowest round's "
              f"last job {slowest:.1f} s after the connection was back (bound {BOUND:g} s)")
    finally:
        next(farmed, None)
