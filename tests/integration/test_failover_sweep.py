"""The sweeper after a real promotion: a replica made primary (REPLICAOF NO ONE) without the
primary's last writes, and the jobs those writes had moved on are enqueued again."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from rookhaven import Document, RetrievalRequest
from rookhaven.config import Settings
from rookhaven.errors import StoreUnavailableError
from rookhaven.pipeline import Pipeline, RecordingDispatcher
from rookhaven.store import Store
from tests.conftest import free_port, start_redis_server, wait_until

DOCS = [Document(id=f"d{i}", text=f"crane {i} berth {i % 4} tide") for i in range(20)]
SETTINGS = Settings(batch_size=10, sweep_after=600, engine="tfcosine@1")


def on(client: redis.Redis, prefix: str,
       dispatcher: RecordingDispatcher | None = None) -> Pipeline:
    """The store under ``prefix`` on ``client``, its messages recorded, not sent."""
    return Pipeline(Store(client, prefix), dispatcher or RecordingDispatcher(), SETTINGS)


@pytest.fixture
def pair(tmp_path: Path) -> Iterator[tuple[redis.Redis, redis.Redis]]:
    ports = free_port(), free_port()
    procs = []
    try:
        for name, port, extra in (("p", ports[0], ()),
                                  ("r", ports[1], ("--replicaof", "127.0.0.1", str(ports[0])))):
            (tmp_path / name).mkdir()
            procs.append(start_redis_server(tmp_path / name, port, "--repl-diskless-sync-delay",
                                            "0", *extra))
        primary, replica = (redis.Redis(port=port) for port in ports)
        wait_until(lambda: replica.info("replication")["master_link_status"] == "up", 30,
                   what="the replica to sync")
        yield primary, replica
    finally:
        for proc in procs:
            proc.kill()
            proc.wait(timeout=10)


def test_a_promotion_enqueues_again_the_jobs_whose_last_writes_it_lost(
        pair: tuple[redis.Redis, redis.Redis]) -> None:
    primary, replica = pair
    old = on(primary, "f")
    old.add_corpus(DOCS, "port")
    running, delivered, queued = (r.job_id for r in old.submit_many(
        [RetrievalRequest(query=f"berth {i}") for i in range(3)], "port"))
    old.store.jobs.start([running], "w1")
    old.store.jobs.deliver([delivered], "w1")
    old.store.heartbeats.beat("w1", 600)  # a live worker holds both
    first = old.sweep()
    assert first.requeued == [] and first.failovers == 0  # young, or in live hands
    assert primary.wait(1, 5000) == 1

    replica.replicaof("NO", "ONE")  # promoted; the old primary keeps serving its clients
    old.store.jobs.fail(queued, "lost", permanent=True, max_attempts=1)  # never replicated
    assert old.sweep().failovers == 0  # the old primary's own history did not change

    new = on(replica, "f")
    assert new.job(queued).state == "queued"
    swept = new.sweep()
    assert swept.failovers == 1
    assert set(swept.requeued) == {running, delivered, queued}
    assert sorted(new.dispatcher.batches()[-1]) == sorted(swept.requeued)  # type: ignore[attr-defined]
    again = new.sweep()
    assert again.failovers == 0 and again.requeued == []  # recorded: once per change


def test_a_promotion_before_the_first_sweep_is_seen_from_the_submitters_record(
        pair: tuple[redis.Redis, redis.Redis]) -> None:
    primary, replica = pair
    old = on(primary, "e")
    old.add_corpus(DOCS, "port")
    (job,) = (r.job_id for r in old.submit_many([RetrievalRequest(query="tide")], "port"))
    old.store.jobs.start([job], "w1")  # begun, in a worker's hands, and no sweep yet
    assert primary.wait(1, 5000) == 1

    replica.replicaof("NO", "ONE")
    new = on(replica, "e")
    new.store.heartbeats.beat("w1", 600)  # the worker lives on
    swept = new.sweep()  # the first sweep ever
    assert swept.failovers == 1 and swept.requeued == [job]


def test_one_sweep_at_a_time_hands_a_failed_over_shard_back(
        pair: tuple[redis.Redis, redis.Redis]) -> None:
    primary, replica = pair
    old = on(primary, "c")
    old.add_corpus(DOCS, "port")
    jobs = [r.job_id for r in old.submit_many(
        [RetrievalRequest(query=f"crane {i}") for i in range(4)], "port")]
    assert old.sweep().failovers == 0
    assert primary.wait(1, 5000) == 1
    replica.replicaof("NO", "ONE")

    # Sweeps that waited out the failover run at once: the first to claim the shard hands
    # its jobs back, the others leave it to that one, even after it recorded the primary.
    new = on(replica, "c")
    failovers = new.store.failovers
    changed, record = failovers.changed("first", 60)
    assert len(changed) == 1 and record
    other = new.sweep()
    assert other.failovers == 0 and other.requeued == []
    failovers.settle(record, "first")
    (shard,) = changed
    assert replica.get(shard.primary_claim) is None  # let go with the record
    late = on(replica, "c")
    assert late.sweep().failovers == 0  # the record names the new primary now

    # A sweep that died holding its claim: the claim expires and the next sweep hands back.
    replica.set(shard.primary_seen, b"a primary before")
    assert failovers.changed("crashed", 0.2)[0] == changed
    assert new.sweep().failovers == 0
    wait_until(lambda: replica.get(shard.primary_claim) is None, 5, what="the claim to expire")

    # A sweep that fails before the jobs went out lets go at once: the next one hands back.
    unsendable = RecordingDispatcher(fail=StoreUnavailableError("the broker is unreachable"))
    failing = on(replica, "c", unsendable)
    with pytest.raises(StoreUnavailableError):
        failing.sweep()
    assert replica.get(shard.primary_claim) is None
    swept = new.sweep()
    assert swept.failovers == 1 and sorted(swept.requeued) == sorted(jobs)
