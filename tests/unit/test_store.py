"""The store's rules on fakeredis: content addressing, write-once, integrity, jobs, registry."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import fakeredis
import pytest

from rookhaven import Document, RetrievalRequest, Retriever, canonical_bytes
from rookhaven.config import Settings
from rookhaven.core.corpus import Corpus
from rookhaven.errors import (
    ConfigError,
    CorpusError,
    IntegrityError,
    NotFoundError,
    StoreUnavailableError,
)
from rookhaven.pipeline.inline import inline_pipeline
from rookhaven.store import JobSpec, Store, connect, redact
from rookhaven.store.heartbeats import Holding, claim_delivery, delivery
from rookhaven.store.jobs import StaleJob
from tests.results_support import AUDIT, framed

IDLE = Holding(0.0, None)  # alive, saying nothing of what it holds


class Clock:
    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture(params=[None, 4], ids=["flat", "4-shards"])
def store(clock: Clock, request: pytest.FixtureRequest) -> Iterator[Store]:
    client = fakeredis.FakeRedis()
    yield Store(client, "t", chunk_bytes=200, clock=clock, log_shards=request.param)
    client.close()


def corpus(n: int = 12, tag: str = "") -> Corpus:
    return Corpus(Document(id=f"d{i:03d}", text=f"berth {i} crane {tag} tide {i % 3}")
                  for i in range(n))


def spec(key: str = "sha256:" + "a" * 64, query: str = "crane") -> JobSpec:
    return JobSpec(key=key, request=RetrievalRequest(query=query), corpus_digest="sha256:c",
                   provider="tfcosine@1", params={})


# Corpora and the registry

def test_a_corpus_is_stored_in_chunks_and_loads_back_with_the_same_digest(store: Store) -> None:
    original = corpus(30)
    entry = store.corpora.put(original, "port")
    assert entry.digest == original.digest and entry.documents == 30
    assert int(store.client.hget(store.keys.corpus_meta(original.digest), "chunks")) > 1
    loaded = store.corpora.load(original.digest)
    assert loaded.digest == original.digest and list(loaded) == list(original)


def test_names_resolve_to_their_newest_version_and_numbered_versions(store: Store,
                                                                      clock: Clock) -> None:
    first = store.corpora.put(corpus(5), "port").digest
    clock.now += 10
    second = store.corpora.put(corpus(5, "v2"), "port").digest
    clock.now += 10
    other = store.corpora.put(corpus(4, "x"), "yard").digest
    assert store.corpora.resolve("port") == second
    assert store.corpora.resolve("port@1") == first
    assert store.corpora.resolve("port@2") == second
    assert store.corpora.resolve("latest") == other
    assert store.corpora.resolve(first) == first
    listed = [(e.name, e.version, e.digest) for e in store.corpora.entries()]
    assert listed == [("port", 1, first), ("port", 2, second), ("yard", 1, other)]


def test_adding_the_same_corpus_again_keeps_its_first_time_and_bytes(store: Store,
                                                                     clock: Clock) -> None:
    first = store.corpora.put(corpus(5), "port")
    clock.now += 50
    again = store.corpora.put(corpus(5), "port")
    assert again == first


def test_unknown_corpus_references_name_what_exists(store: Store) -> None:
    store.corpora.put(corpus(3), "port")
    with pytest.raises(NotFoundError, match="known names: port"):
        store.corpora.resolve("quay")
    with pytest.raises(NotFoundError, match=r"versions 1\.\.1"):
        store.corpora.resolve("port@7")
    for other_digit in ("port@²", "port@①", "port@١"):  # digits int() reads, or fails on
        with pytest.raises(NotFoundError, match=r"versions 1\.\.1"):
            store.corpora.resolve(other_digit)
    with pytest.raises(NotFoundError, match="corpus add"):
        store.corpora.resolve("sha256:" + "0" * 64)


def test_bad_corpus_names_are_refused(store: Store) -> None:
    for bad in ("latest", "a@b", "sha256:x", "", "two\nlines", "port*", "../../etc",
                ".hidden", " port", "x" * 129):
        with pytest.raises(CorpusError, match="letters, digits") as caught:
            store.corpora.put(corpus(2), bad)
        assert "\n" not in str(caught.value) and len(str(caught.value)) < 300
    assert not store.corpora.entries()
    for good in ("port", "port-ops_2.v1", "x" * 128):
        assert store.corpora.put(corpus(2), good).name == good


def test_a_tampered_corpus_chunk_is_an_integrity_error_on_load(store: Store) -> None:
    digest = store.corpora.put(corpus(10)).digest
    key = store.keys.corpus_chunk(digest, 0)
    store.client.set(key, store.client.get(key).replace(b"berth", b"barth"))
    with pytest.raises(IntegrityError, match=digest):
        store.corpora.load(digest)


def test_a_stored_corpus_streams_into_an_index_a_page_at_a_time(store: Store) -> None:
    original = corpus(30)
    digest = store.corpora.put(original, "port").digest
    chunks = int(store.client.hget(store.keys.corpus_meta(digest), "chunks"))
    assert chunks > 2
    streamed = Retriever(store.corpora.stream(digest, page=2), "bm25@2")
    assert streamed.corpus.ids == original.ids and streamed.corpus.digest == digest
    request = RetrievalRequest(query="crane tide", recall_budget=5)
    assert streamed.retrieve(request) == Retriever(original, "bm25@2").retrieve(request)


def test_a_tampered_or_missing_chunk_is_an_integrity_error_when_streamed(store: Store) -> None:
    digest = store.corpora.put(corpus(30)).digest
    last = int(store.client.hget(store.keys.corpus_meta(digest), "chunks")) - 1
    key = store.keys.corpus_chunk(digest, last)
    kept = store.client.get(key)
    store.client.set(key, kept.replace(b"berth", b"barth"))
    with pytest.raises(IntegrityError, match=f"{digest} hashes to"):
        Retriever(store.corpora.stream(digest))
    store.client.set(key, kept[:-1])  # the last newline gone: a byte short
    with pytest.raises(IntegrityError, match=r"holds \d+ bytes, not the"):
        Retriever(store.corpora.stream(digest))
    store.client.delete(key)
    with pytest.raises(IntegrityError, match="missing chunks"):
        Retriever(store.corpora.stream(digest))
    with pytest.raises(NotFoundError):
        store.corpora.stream("sha256:" + "0" * 64)


# Results: content-addressed, write-once

def test_results_are_write_once_and_identical_bytes_are_accepted_again(store: Store) -> None:
    key = "sha256:" + "b" * 64
    assert store.results.put(key, "sha256:c", framed(b"[1]"), AUDIT) == "stored"
    assert store.results.put(key, "sha256:c", framed(b"[1]"), AUDIT) == "stored"
    assert store.results.get(key) == framed(b"[1]") and store.results.audit(key) == AUDIT


def test_a_result_is_stored_once_and_its_audit_read_from_it(store: Store) -> None:
    # The audit is framed in the result (ADR 0064): no second copy under a key of its own.
    keys = [f"sha256:{i:064d}" for i in range(3)]
    for key in keys:
        store.results.put(key, "sha256:c", framed(b'[{"id":"d1"}]'), AUDIT)
    assert store.client.exists(*[store.keys.audit(key) for key in keys]) == 0
    assert store.results.audit_many([*keys, "sha256:" + "f" * 64]) == [AUDIT] * 3 + [None]
    with pytest.raises(NotFoundError):
        store.results.audit("sha256:" + "f" * 64)


def test_different_bytes_under_an_existing_key_are_refused_logged_and_recorded(
        store: Store) -> None:
    seen: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.emit = seen.append  # type: ignore[method-assign]
    logging.getLogger("rookhaven.store").addHandler(handler)
    key = "sha256:" + "c" * 64
    store.results.put(key, "sha256:c", framed(b"[1]"), AUDIT)
    try:
        with pytest.raises(IntegrityError, match=key):
            store.results.put(key, "sha256:c", framed(b"[2]"), AUDIT)
    finally:
        logging.getLogger("rookhaven.store").removeHandler(handler)
    assert store.results.get(key) == framed(b"[1]")
    assert [(v.key, v.what) for v in store.ledger.violations()] == [(key, "result")]
    assert [r.levelname for r in seen if "integrity violation" in r.getMessage()] == ["ERROR"]


def test_missing_results_are_not_found_with_a_hint(store: Store) -> None:
    with pytest.raises(NotFoundError, match="rookhaven job"):
        store.results.get("sha256:" + "d" * 64)


def test_stored_audits_are_indexed_by_time_and_by_corpus(store: Store, clock: Clock) -> None:
    for i in range(25):
        clock.now = 2_000.0 + (i // 5)  # five audits share each second: ties across pages
        store.results.put(f"sha256:{i:064d}", f"sha256:c{i % 2}", framed(b"[]"), AUDIT)
    everything = [k for k, _ in store.audits.scan(page=3)]
    assert sorted(everything) == sorted(f"sha256:{i:064d}" for i in range(25))
    assert len(everything) == 25
    odd = [k for k, _ in store.audits.scan(corpus="sha256:c1", page=2)]
    assert odd == [f"sha256:{i:064d}" for i in range(25) if i % 2]
    assert store.audits.count(since=2_001, until=2_002) == 10
    assert store.audits.stored_at(f"sha256:{0:064d}") == 2_000.0


# Jobs: the state machine and the ledger

def test_a_job_moves_queued_running_done_and_is_done_exactly_once(store: Store) -> None:
    job = spec()
    assert store.jobs.create(job) == "new"
    assert store.jobs.create(job) == "queued"
    [(verdict, attempt, got)] = store.jobs.start([job.key], "w1")
    assert (verdict, attempt, got) == ("run", 0, job)  # claimed: no attempt charged yet
    assert store.jobs.get(job.key).state == "running"
    assert store.jobs.begin(job.key, "w1", max_attempts=3) == ("run", 1)
    assert store.results.put(job.key, job.corpus_digest, framed(b"[]"), AUDIT) == "done"
    assert store.results.put(job.key, job.corpus_digest, framed(b"[]"), AUDIT) == "already-done"
    assert store.jobs.start([job.key], "w2")[0][0] == "done"
    record = store.jobs.get(job.key)
    assert (record.state, record.attempts, record.worker) == ("done", 1, "w1")
    assert record.finished is not None and record.error is None
    events = [e.event for e in store.ledger.events()]
    assert events == ["queued", "running", "done"]
    assert store.jobs.counts() == {"queued": 0, "running": 0}


def test_submitting_a_request_whose_result_exists_is_answered_from_the_store(
        store: Store) -> None:
    job = spec()
    store.results.put(job.key, job.corpus_digest, framed(b"[]"), AUDIT)
    assert store.jobs.create(job) == "cached"
    with pytest.raises(NotFoundError):
        store.jobs.get(job.key)


def test_a_failure_is_retried_until_the_attempts_run_out_then_kept(store: Store) -> None:
    job = spec()
    store.jobs.create(job)
    store.jobs.start([job.key], "w1")
    store.jobs.begin(job.key, "w1", max_attempts=2)
    assert store.jobs.fail(job.key, "boom 1", permanent=False, max_attempts=2) == "queued"
    store.jobs.start([job.key], "w1")
    store.jobs.begin(job.key, "w1", max_attempts=2)
    assert store.jobs.fail(job.key, "boom 2", permanent=False, max_attempts=2) == "failed"
    record = store.jobs.get(job.key)
    assert (record.state, record.attempts, record.error) == ("failed", 2, "boom 2")
    assert store.jobs.start([job.key], "w1")[0][0] == "failed"
    assert store.jobs.create(job) == "new"  # a failed job may be submitted afresh
    assert store.jobs.get(job.key).attempts == 0


def test_a_permanent_failure_closes_the_job_at_once(store: Store) -> None:
    job = spec()
    store.jobs.create(job)
    store.jobs.start([job.key], "w1")
    assert store.jobs.fail(job.key, "no corpus", permanent=True, max_attempts=5) == "failed"


def test_an_integrity_violation_fails_an_open_job_and_overwrites_nothing(store: Store) -> None:
    job = spec()
    store.jobs.create(job)
    store.jobs.start([job.key], "w1")
    store.client.set(store.keys.result(job.key), b"planted")  # another writer got there first
    with pytest.raises(IntegrityError):
        store.results.put(job.key, job.corpus_digest, framed(b"[\"computed\"]"), AUDIT)
    assert store.results.get(job.key) == b"planted"
    record = store.jobs.get(job.key)
    assert record.state == "failed" and "integrity violation" in (record.error or "")
    # The planted bytes frame no audit, and none was stored beside them.
    with pytest.raises(IntegrityError, match="not a result Rookhaven wrote"):
        store.results.audit(job.key)
    assert store.client.exists(store.keys.audit(job.key)) == 0


def test_stale_jobs_are_those_queued_too_long_or_running_on_a_dead_worker(
        store: Store, clock: Clock) -> None:
    old, fresh, lost, busy = (spec("sha256:" + c * 64, c) for c in "1234")
    for job in (old, fresh, lost, busy):
        store.jobs.create(job)
        clock.now += 1
    store.jobs.start([lost.key], "dead")
    store.jobs.start([busy.key], "alive")
    store.heartbeats.beat("alive", 30)
    found = store.jobs.stale(queued_before=1_000.5, running_before=0,
                             holding=store.heartbeats.holding, limit=100)
    assert {(s.id, s.reason) for s in found} == {(old.key, "queued without a result"),
                                                 (lost.key, "worker dead stopped")}


def test_sweeps_that_fill_their_limit_take_turns_across_shards(store: Store,
                                                               clock: Clock) -> None:
    for i in range(40):
        store.jobs.create(spec(f"sha256:{i:064x}", str(i)))
    clock.now += 10
    shards: set[int] = set()
    for _ in store.keys.shards:  # as many sweeps as shards, two jobs each, requeued
        for job in store.jobs.stale(queued_before=clock.now - 5, running_before=0,
                                    holding=lambda names: dict.fromkeys(names, IDLE),
                                    limit=2):
            shards.add(store.keys.shard_of(job.id))
            assert store.jobs.requeue(job, max_attempts=3) == "requeue"
    assert shards == {shard.index for shard in store.keys.shards}


def test_a_job_delivered_to_a_dead_worker_is_stale_at_once_and_only_while_queued(
        store: Store, clock: Clock) -> None:
    held, orphaned, started, done = (spec("sha256:" + c * 64, c) for c in "5678")
    for job in (held, orphaned, started, done):
        store.jobs.create(job)
    store.jobs.start([done.key], "w1")
    store.results.put(done.key, done.corpus_digest, framed(b"[]"), AUDIT)
    clock.now += 1
    # Only queued jobs are marked: a finished one is left as it is.
    assert store.jobs.deliver([held.key, done.key], "alive") == 1
    assert store.jobs.deliver([orphaned.key, started.key], "dead") == 2
    store.jobs.start([started.key], "dead")  # the pool claimed it: the running rule's now
    store.heartbeats.beat("alive", 30)
    found = store.jobs.stale(queued_before=0, running_before=0, holding=store.heartbeats.holding,
                             limit=100)
    assert {(s.id, s.reason) for s in found} == {
        (orphaned.key, "delivered to worker dead, which stopped"),
        (started.key, "worker dead stopped")}
    assert store.jobs.get(held.key).state == "queued"
    assert store.jobs.get(held.key).worker == "alive"
    for job in found:
        assert store.jobs.requeue(job, max_attempts=3) == "requeue"
    # Requeued, started and closed jobs leave the index; only the live worker's is left.
    assert store.client.zrange(store.keys.shard(held.key).jobs_delivered, 0, -1) == [
        held.key.encode()]
    assert store.jobs.stale(queued_before=0, running_before=0, holding=store.heartbeats.holding,
                            limit=100) == []


def test_a_job_a_live_worker_dropped_is_stale_once_a_later_heartbeat_omits_its_message(
        store: Store, clock: Clock) -> None:
    kept, dropped, arrived, unsaid = (spec("sha256:" + c * 64, c) for c in "abcd")
    for job in (kept, dropped, arrived, unsaid):
        store.jobs.create(job)
    store.jobs.deliver([kept.key], "w1", "k" * 12)
    store.jobs.deliver([dropped.key], "w1", "d" * 12)
    store.jobs.start([dropped.key], "w1", "w1/" + "d" * 12 + "0000")  # claimed in its message
    store.jobs.deliver([unsaid.key], "old", "u" * 12)
    clock.now += 1
    holds = {"k" * 12}
    store.heartbeats.beat("w1", 30, lambda: holds)
    store.heartbeats.beat("old", 30)  # an earlier Rookhaven's: says nothing of its messages
    clock.now += 1
    store.jobs.deliver([arrived.key], "w1", "n" * 12)  # arrived after the heartbeat
    found = store.jobs.stale(queued_before=0, running_before=0,
                             holding=store.heartbeats.holding, limit=100)
    assert [(s.id, s.reason.split(" (")[0]) for s in found] == [
        (dropped.key, "worker w1 dropped its message")]
    # The one delivered after the heartbeat was not judged by it; a later one that names
    # none of the three messages judges them all.
    clock.now += 1
    holds.clear()
    store.heartbeats.beat("w1", 30, lambda: holds)
    assert {s.id for s in store.jobs.stale(queued_before=0, running_before=0,
                                           holding=store.heartbeats.holding, limit=100)} == {
        dropped.key, kept.key, arrived.key}


def test_a_heartbeat_says_what_its_worker_holds_and_an_earlier_ones_time_alone(
        store: Store, clock: Clock) -> None:
    store.heartbeats.beat("w1", 30, lambda: ["b" * 12, "a" * 12])
    store.heartbeats.beat("w0", 30)
    found = store.heartbeats.holding({"w0", "w1", "gone"})
    assert found == {"w1": Holding(1000.0, frozenset({"a" * 12, "b" * 12})),
                     "w0": Holding(1000.0, None)}
    assert store.heartbeats.alive({"w0", "gone"}) == {"w0"}
    claim = "host:1:ab/" + delivery("batch:x") + "beef"
    assert claim_delivery(claim) == delivery("batch:x") and claim_delivery("") == ""
    said = Holding(1000.0, frozenset({delivery("batch:x")}))
    assert not said.dropped(claim, "999.000")
    assert said.dropped("host:1:ab/" + delivery("batch:y"), "999.000")
    assert not said.dropped("host:1:ab/" + delivery("batch:y"), "1000.000")  # not after it
    assert not Holding(1000.0, None).dropped(claim, "1.000")


def test_a_delivery_mark_is_dropped_when_its_job_is_started_or_closed(store: Store) -> None:
    job = spec()
    store.jobs.create(job)
    store.jobs.deliver([job.key], "w1")
    store.jobs.start([job.key], "w1")
    assert store.client.zcard(store.keys.shards[0].jobs_delivered) == 0
    store.jobs.fail(job.key, "ValueError: flaky", permanent=False, max_attempts=5)
    store.jobs.deliver([job.key], "w2")  # queued again and delivered to another worker
    assert store.jobs.get(job.key).worker == "w2"
    store.jobs.fail(job.key, "bad input", permanent=True, max_attempts=5)
    assert store.client.zcard(store.keys.shards[0].jobs_delivered) == 0
    assert store.jobs.deliver([job.key, "sha256:" + "9" * 64], "w3") == 0  # failed, missing


def test_a_message_of_thousands_of_jobs_is_marked_delivered_whole(store: Store) -> None:
    # More jobs per shard than one ZADD of the DELIVER script takes (500): every queued one
    # is marked.
    jobs = [spec(f"sha256:{i:064x}", str(i)) for i in range(600 * len(store.keys.shards) + 1)]
    store.jobs.create_many(jobs)
    store.jobs.start([jobs[0].key], "w0")  # running: not marked
    assert store.jobs.deliver([j.key for j in jobs], "w1") == len(jobs) - 1
    marked = [m for shard in store.keys.shards
              for m in store.client.zrange(shard.jobs_delivered, 0, -1)]
    assert sorted(marked) == sorted(j.key.encode() for j in jobs[1:])
    assert {store.jobs.get(j.key).worker for j in jobs[1:]} == {"w1"}


def test_requeue_is_refused_when_the_job_moved_on_since_the_sweeper_looked(
        store: Store, clock: Clock) -> None:
    job = spec()
    store.jobs.create(job)
    seen = store.jobs.get(job.key).updated
    clock.now += 5
    store.jobs.start([job.key], "w1")
    stale = StaleJob(job.key, f"{seen:.3f}", "test")
    assert store.jobs.requeue(stale, max_attempts=3) == "changed"


# Connections

def test_an_unreachable_redis_is_a_clear_store_error(unused_port: int) -> None:
    store = Store(connect(f"redis://app:s3cret@127.0.0.1:{unused_port}/3", timeout=0.5), "t")
    with pytest.raises(StoreUnavailableError, match=r"127\.0\.0\.1:\d+/3.*ROOKHAVEN_REDIS_URL") \
            as caught:
        store.corpora.resolve("latest")
    assert "s3cret" not in str(caught.value)


def test_urls_are_checked_and_passwords_redacted() -> None:
    assert redact("rediss://app:pw@h:6380/2") == "rediss://app:***@h:6380/2"
    assert redact("redis://h/0") == "redis://h/0"
    with pytest.raises(ConfigError, match="ROOKHAVEN_REDIS_URL"):
        connect(None)
    with pytest.raises(ConfigError, match="scheme 'http'"):
        connect("http://h:6379")
    client = connect("rediss://app:pw@example.invalid:6380/2?ssl_cert_reqs=required")
    kwargs = client.connection_pool.connection_kwargs
    assert (kwargs["username"], kwargs["db"], kwargs["port"]) == ("app", 2, 6380)
    assert "SSL" in client.connection_pool.connection_class.__name__


@pytest.fixture
def unused_port() -> int:
    from tests.conftest import free_port

    return free_port()


def test_canonical_result_bytes_are_what_the_store_keeps(store: Store) -> None:
    audit = canonical_bytes({"b": 1, "a": [1, 2]})
    data = canonical_bytes({"hits": [], "audit": {"a": [1, 2], "b": 1}})
    store.results.put("sha256:" + "e" * 64, "sha256:c", data, audit)
    assert store.results.get("sha256:" + "e" * 64) == data


def test_a_result_that_does_not_embed_its_audit_is_refused_unstored(store: Store) -> None:
    key = "sha256:" + "d" * 64
    for result, audit in ((framed(b"[]", b'{"a":2}'), AUDIT), (b'{"r":1}', AUDIT),
                          (framed(b"[]") + b" ", b'{"a"')):
        with pytest.raises(IntegrityError, match="does not embed the audit offered with it"):
            store.results.put(key, "sha256:c", result, audit)
    assert not store.results.exists(key) and store.log_of(key).size() == 0


def test_every_job_event_and_stored_result_is_counted_with_the_ledger() -> None:
    client = fakeredis.FakeRedis()
    store = Store(client, "c")
    settings = Settings(engine="tfcosine@1")
    pipe = inline_pipeline(store, settings)
    pipe.add_corpus([Document(id="a", text="crane"), Document(id="b", text="tide")], "port")
    pipe.submit_many([RetrievalRequest(query="crane", seed=f"s{i}") for i in range(3)], "port")
    pipe.submit(RetrievalRequest(query="crane", seed="s0"), "port")  # cached: no new events
    counters = store.verifications.counters()
    assert (counters["jobs_queued"], counters["jobs_running"], counters["jobs_done"],
            counters["results_stored"]) == (3, 3, 3, 3)
    events = list(store.ledger.events())
    assert counters["jobs_done"] == sum(e.event == "done" for e in events)


def test_store_usage_counts_and_says_when_bytes_cannot_be_measured(store: Store) -> None:
    from rookhaven.store.usage import describe
    digest = store.corpora.put(corpus(5), "port").digest
    empty = store.usage.measure()
    assert (empty.results, empty.corpora, empty.bytes_per_result) == (0, 1, None)
    assert "bytes per result: unknown" in describe(empty)
    key = "sha256:" + "c" * 64
    store.results.put(key, digest, framed(b"[1]"), AUDIT)
    found = store.usage.measure()
    assert (found.results, found.leaves, found.sampled) == (1, 1, 1)
    # fakeredis has no MEMORY USAGE: the numbers it cannot give are None, not guessed.
    assert found.bytes_per_result is None and found.bytes_for(10) is None
