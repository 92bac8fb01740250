"""Jobs moved many at a time (job records of form 2): one script per shard, results by MSETNX, the
careful path when a key exists, log tiles crossed in one call, and older stores migrated."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator

import fakeredis
import orjson
import pytest

from rookhaven import Document, RetrievalRequest
from rookhaven.config import Settings
from rookhaven.core.canonical import canonical_bytes
from rookhaven.errors import ConfigError, IntegrityError
from rookhaven.pipeline import Executor, Pipeline, RecordingDispatcher
from rookhaven.store import JobSpec, Store
from rookhaven.store.records import state_fields, state_name
from rookhaven.store.results import Offered
from rookhaven.transparency.merkle import leaf_hash
from tests.results_support import AUDIT, framed


class Clock:
    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        self.now += 0.001  # every step at a time of its own, as a real clock would be
        return self.now


@pytest.fixture(params=[None, 3], ids=["flat", "3-shards"])
def store(request: pytest.FixtureRequest) -> Iterator[Store]:
    client = fakeredis.FakeRedis()
    yield Store(client, "t", clock=Clock(), log_shards=request.param)
    client.close()


def spec(i: int, corpus: str = "sha256:c") -> JobSpec:
    return JobSpec(key=f"sha256:{i:064x}", request=RetrievalRequest(query=f"crane {i}"),
                   corpus_digest=corpus, provider="tfcosine@1", params={})


def offered(job: JobSpec, hits: bytes = b"[]") -> Offered:
    return Offered(job.key, job.corpus_digest, framed(hits), AUDIT)


def test_a_message_of_jobs_moves_through_every_state_with_events_per_job(store: Store) -> None:
    jobs = [spec(i) for i in range(30)]
    assert store.jobs.create_many([*jobs, jobs[0]]) == ["new"] * 30 + ["queued"]
    ids = [j.key for j in jobs]
    assert store.jobs.deliver(ids, "w") == 30
    started = store.jobs.start(ids, "w", "w/1")
    assert [(verdict, attempts) for verdict, attempts, _ in started] == [("run", 0)] * 30
    assert [s for _, _, s in started] == jobs  # the spec comes back as it was recorded
    round_ = store.round()
    begun = store.jobs.queue_begin(round_, ids, "w", 3, "w/1")
    round_.send("beginning")
    assert [b.get() for b in begun] == [("run", 1)] * 30
    round_ = store.round()
    puts = store.results.queue_put(round_, [offered(j) for j in jobs])
    round_.send("storing")
    assert [p.get() for p in puts] == ["done"] * 30
    records = store.jobs.get_many(ids)
    assert all(r is not None and r.state == "done" and r.attempts == 1 for r in records)
    assert store.jobs.counts() == {"queued": 0, "running": 0}
    events = list(store.ledger.events())
    for name in ("queued", "running", "done"):
        assert sorted(e.job for e in events if e.event == name) == sorted(ids)
    assert sum(log.size() for log in store.logs) == 30
    for log in store.logs:  # each leaf's hash is in the tile, in the leaves' order
        assert log.leaf_hashes(0, log.size()) == b"".join(
            leaf_hash(leaf) for _, leaf in log.leaves())
    assert store.jobs.create_many(jobs[:2]) == ["cached", "cached"]


def test_a_chunk_with_one_result_already_stored_is_stored_one_by_one(store: Store) -> None:
    jobs = [spec(i) for i in range(5)]
    store.jobs.create_many(jobs)
    store.results.put(jobs[2].key, jobs[2].corpus_digest, framed(b"[]"), AUDIT)  # same bytes
    ids = [j.key for j in jobs]
    store.jobs.start(ids, "w")
    round_ = store.round()
    puts = store.results.queue_put(round_, [offered(j) for j in jobs])
    round_.send("storing")
    assert [p.get() for p in puts] == ["done", "done", "already-done", "done", "done"]
    assert sum(log.size() for log in store.logs) == 5  # the stored one kept its one leaf
    assert {r.state for r in store.jobs.get_many(ids) if r} == {"done"}


def test_different_bytes_in_a_chunk_fail_only_their_own_job(store: Store) -> None:
    jobs = [spec(i) for i in range(4)]
    store.jobs.create_many(jobs)
    store.results.put(jobs[1].key, jobs[1].corpus_digest, framed(b"[1]"), AUDIT)
    store.jobs.create(jobs[1])  # cached: nothing recorded
    ids = [j.key for j in jobs]
    store.jobs.start(ids, "w")
    round_ = store.round()
    puts = store.results.queue_put(round_, [offered(j, b"[2]") for j in jobs])
    round_.send("storing")
    assert puts[0].get() == puts[2].get() == puts[3].get() == "done"
    with pytest.raises(IntegrityError, match="different result bytes"):
        puts[1].get()
    assert store.results.get(jobs[1].key) == framed(b"[1]")  # kept
    assert [v.key for v in store.ledger.violations()] == [jobs[1].key]


def test_jobs_of_two_corpora_are_indexed_under_each_corpus(store: Store) -> None:
    jobs = [spec(1, "sha256:a"), spec(2, "sha256:b"), spec(3, "sha256:a")]
    store.jobs.create_many(jobs)
    store.jobs.start([j.key for j in jobs], "w")
    round_ = store.round()
    puts = store.results.queue_put(round_, [offered(j) for j in jobs])
    round_.send("storing")
    assert [p.get() for p in puts] == ["done"] * 3
    for corpus, wanted in (("sha256:a", {jobs[0].key, jobs[2].key}), ("sha256:b", {jobs[1].key})):
        found = {m.decode() for shard in store.keys.shards
                 for m in store.client.zrange(shard.audits_by_corpus(corpus), 0, -1)}
        assert found == wanted


def test_one_call_appends_to_every_log_tile_its_leaves_fall_in() -> None:
    # Tiles of 4 hashes: six leaves fill tile 0 and half of tile 1, three more cross into 2.
    store = Store(fakeredis.FakeRedis(), "t", clock=Clock())
    ctx, k = store._ctx, store.keys.shards[0]
    hashes = [hashlib.sha256(bytes([i])).digest() for i in range(9)]

    def complete(first: int, last: int) -> None:
        ctx.complete(keys=[*ctx.job_keys(k), k.audits_by_time, k.audits_by_corpus("c"),
                           k.log_leaves, k.receipt("x")],
                     args=[*ctx.job_args(ctx.now()), k.log_hashes(0, 0)[:-1], 4, "checked", 0,
                           *(part for i in range(first, last)
                             for part in (f"id{i}", f"leaf{i}", hashes[i]))])

    complete(0, 6)
    complete(6, 9)
    assert [store.client.get(k.log_hashes(0, t)) for t in range(3)] == [
        b"".join(hashes[0:4]), b"".join(hashes[4:8]), hashes[8]]
    assert [int(store.client.hget(k.log_index, f"id{i}")) for i in range(9)] == list(range(9))


def _v1_job(client: fakeredis.FakeRedis, job: JobSpec, state: str, **extra: str) -> None:
    """A job hash as a version-1 store's CREATE wrote it."""
    client.hset(f"old:job:{job.key}", mapping={
        "id": job.key, "key": job.key, "request": canonical_bytes(job.request),
        "corpus": job.corpus_digest, "provider": job.provider,
        "params": canonical_bytes(job.params), "state": state, "created": "10.000",
        "updated": "11.000", "enqueued": "1", "attempts": "0", "started": "", "finished": "",
        "worker": "", "error": "", **extra})


def test_a_version_1_store_refuses_jobs_until_migrated_and_then_runs_them() -> None:
    client = fakeredis.FakeRedis()
    client.set("old:layout", orjson.dumps({"version": 1, "tags": None}))
    waiting, done, failed = spec(1), spec(2), spec(3)
    _v1_job(client, waiting, "queued")
    _v1_job(client, done, "done", attempts="1", finished="12.000")
    _v1_job(client, failed, "failed", attempts="3", error="ValueError: no")
    client.zadd("old:jobs:queued", {waiting.key: 11.0})
    client.set(f"old:result:{done.key}", framed(b"[]"))
    client.xadd("old:ledger", {"job": done.key, "event": "done", "at": "12.000"})
    store = Store(client, "old", clock=Clock())
    with pytest.raises(ConfigError, match="rookhaven store migrate"):
        store.jobs.create(spec(4))
    assert store.results.get(done.key) == framed(b"[]")  # results are read as they are
    store.heartbeats.beat("w", 30)
    with pytest.raises(ConfigError, match="is alive"):
        store.migrate()
    assert store.migrate(force=True) == 3
    assert store.keys.jobs_form == 2 and not client.keys("old:job:*")
    layout = orjson.loads(client.get("old:layout"))  # an earlier release can still read it
    assert layout["version"] == 1 and layout["jobs"] == 2
    got = {r.id: r for r in store.jobs.get_many([waiting.key, done.key, failed.key]) if r}
    assert (got[waiting.key].state, got[done.key].state, got[failed.key].state) == (
        "queued", "done", "failed")
    assert got[failed.key].error == "ValueError: no" and got[done.key].finished == 12.0
    assert got[waiting.key].spec == waiting
    assert [(e.job, e.event) for e in store.ledger.events()] == [(done.key, "done")]
    assert store.jobs.start([waiting.key], "w")[0][2] == waiting
    assert store.jobs.create(failed) == "new"
    assert store.jobs.get(failed.key).error is None
    assert Store(client, "old").migrate() == 0  # once is enough


@pytest.mark.parametrize("shards", [None, 2])
def test_audit_copies_an_earlier_release_stored_go_only_where_their_result_frames_them(
        shards: int | None) -> None:
    store = Store(fakeredis.FakeRedis(), "t", clock=Clock(), log_shards=shards)
    keys = [f"sha256:{i:064d}" for i in range(1203)]  # more than a page
    for key in keys:
        store.results.put(key, "sha256:c", framed(b"[]"), AUDIT)
    client, k = store.client, store.keys
    client.mset({k.audit(key): AUDIT for key in keys})
    client.set(k.audit(keys[0]), b'{"edited":true}')  # evidence: kept
    client.set(k.audit("sha256:" + "e" * 64), AUDIT)  # its result is gone: kept
    seen: list[int] = []
    assert store.drop_audit_copies(progress=seen.append) == (1202, 2)
    assert seen[-1] == 1204
    assert sorted(client.keys("t*:audit:*")) == sorted(
        [k.audit(keys[0]).encode(), k.audit("sha256:" + "e" * 64).encode()])
    assert store.results.audit_many(keys) == [AUDIT] * len(keys)
    assert store.drop_audit_copies() == (0, 2)  # once is enough


def test_a_result_stored_by_a_worker_that_died_before_logging_it_is_logged_by_the_next(
        ) -> None:
    # The chunk's MSETNX ran, its COMPLETE never did: the result stored, no leaf, the
    # job still running. Its next run must log it, not close the job as already stored.
    store = Store(fakeredis.FakeRedis(), "t", clock=Clock())
    settings = Settings.from_mapping({"ROOKHAVEN_LOG_LEVEL": "warning"})
    pipe = Pipeline(store, RecordingDispatcher(), settings)
    pipe.add_corpus([Document(id=f"d{i}", text=f"crane {i} tide") for i in range(9)], "port")
    ref = pipe.submit(RetrievalRequest(query="crane"), "port")
    executor = Executor(store, settings)
    job = store.jobs.get(ref.job_id)
    result, _ = executor.compute(job.spec)
    k = store.keys.shard(ref.job_id)
    store.jobs.start([ref.job_id], "dead")
    store.client.set(k.result(ref.job_id), result)
    assert store.log.index_of(ref.job_id) is None
    report = pipe.sweep(older_than=0)  # its worker is gone (no heartbeat)
    assert report.requeued == [ref.job_id] and report.done == []
    assert executor.run([ref.job_id], "w") == ["done"]
    assert store.log.index_of(ref.job_id) == 0
    assert store.audits.count(corpus=job.corpus_digest) == 1
    assert store.results.get(ref.job_id) == result


def test_a_key_offered_twice_in_a_chunk_with_other_bytes_is_a_violation() -> None:
    store = Store(fakeredis.FakeRedis(), "t", clock=Clock())
    job = spec(1)
    store.jobs.create(job)
    store.jobs.start([job.key, job.key], "w")
    round_ = store.round()
    first, second = store.results.queue_put(round_, [offered(job, b"[1]"), offered(job, b"[2]")])
    round_.send("storing")
    assert first.get() == "done"
    with pytest.raises(IntegrityError, match="different result bytes"):
        second.get()
    assert store.results.get(job.key) == framed(b"[1]")


def test_a_done_job_keeps_no_error_from_an_earlier_attempt() -> None:
    store = Store(fakeredis.FakeRedis(), "t", clock=Clock())
    job = spec(1)
    store.jobs.create(job)
    store.jobs.start([job.key], "w")
    store.jobs.begin(job.key, "w", 3)
    assert store.jobs.fail(job.key, "ValueError: boom", permanent=False, max_attempts=3) == "queued"
    store.results.put(job.key, job.corpus_digest, framed(b"[]"), AUDIT)
    record = store.jobs.get(job.key)
    assert (record.state, record.error) == ("done", None)


def test_a_job_named_twice_in_one_creation_answers_its_state_twice() -> None:
    store = Store(fakeredis.FakeRedis(), "t", clock=Clock())
    job = spec(1)
    store.jobs.create(job)
    store.jobs.start([job.key], "w")
    assert store.jobs.create_many([job, job]) == ["running", "running"]
    assert store.jobs.create_many([spec(2), spec(2)]) == ["new", "queued"]


def test_states_are_read_without_the_records(store: Store) -> None:
    jobs = [spec(i) for i in range(4)]
    store.jobs.create_many(jobs[:3])
    store.jobs.start([jobs[1].key], "w")
    store.results.put(jobs[2].key, jobs[2].corpus_digest, framed(b"[]"), AUDIT)
    asked = [j.key for j in jobs] + [jobs[0].key]
    assert store.jobs.states_many(asked) == ["queued", "running", "done", None, "queued"]


@pytest.mark.parametrize("state", [
    b"queued|0|1|1000.001|1000.001||||",
    b"running|2|3|1000.001|1000.5|1000.5||host:12:ab|host:12:ab/cd|ef",
    b"done|1|1|1000.001|1000.9|1000.5|1000.9|w|w/x",
    b"failed||||||||"])
def test_a_polls_state_name_is_the_state_strings_first_field(state: bytes) -> None:
    assert state_name(state) == state_fields(state)["state"]
