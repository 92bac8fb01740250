"""The service layer and executor on fakeredis, with a dispatcher that records messages."""

from __future__ import annotations

import gc
import io
import logging
from collections.abc import Iterator
from typing import Any

import fakeredis
import orjson
import pytest

from rookhaven import Corpus, Document, RetrievalRequest, canonical_bytes, retrieve
from rookhaven.config import Settings
from rookhaven.errors import ConfigError, InvalidRequestError, WaitTimeoutError
from rookhaven.logs import configure_logging
from rookhaven.pipeline import Executor, Pipeline, RecordingDispatcher, celery_config
from rookhaven.pipeline import executor as executor_module
from rookhaven.store import Store
from rookhaven.transparency.leaf import leaf_for, parse_leaf
from tests.results_support import forget_job

DOCS = [Document(id=f"d{i}", text=f"crane {i} berth {i % 4} tide {i % 3} delay")
        for i in range(40)]


@pytest.fixture
def settings() -> Settings:
    return Settings(batch_size=4, job_max_attempts=2, sweep_after=60, engine="tfcosine@1")


@pytest.fixture
def store() -> Iterator[Store]:
    client = fakeredis.FakeRedis()
    yield Store(client, "p")
    client.close()


@pytest.fixture
def pipeline(store: Store, settings: Settings) -> Pipeline:
    pipe = Pipeline(store, RecordingDispatcher(ledger=store), settings)
    pipe.add_corpus(DOCS, "port")
    return pipe


def sent(pipeline: Pipeline) -> list[list[str]]:
    dispatcher = pipeline.dispatcher
    assert isinstance(dispatcher, RecordingDispatcher)
    return dispatcher.batches()


def test_submit_records_the_job_then_enqueues_it_under_its_content_key(
        pipeline: Pipeline) -> None:
    ref = pipeline.submit(RetrievalRequest(query="crane delay"), "port")
    assert ref.state == "queued" and not ref.cached and ref.job_id == ref.result_key
    assert sent(pipeline) == [[ref.job_id]]
    assert pipeline.job(ref.job_id).request.query == "crane delay"


def test_a_worker_stores_the_same_bytes_as_inline_retrieve(pipeline: Pipeline,
                                                           settings: Settings) -> None:
    request = RetrievalRequest(query="crane delay and tide", recallBudget=5, seed="s")
    ref = pipeline.submit(request, "port")
    assert Executor(pipeline.store, settings).run([ref.job_id], "w") == ["done"]
    inline = retrieve(request, DOCS, settings.engine)
    assert pipeline.result(ref.result_key) == canonical_bytes(inline)
    assert pipeline.audit(ref.result_key) == canonical_bytes(inline.audit)
    assert pipeline.job(ref.job_id).state == "done"


def test_a_stored_result_answers_a_submission_at_once_without_a_message(
        pipeline: Pipeline, settings: Settings) -> None:
    request = RetrievalRequest(query="berth")
    first = pipeline.submit(request, "port")
    Executor(pipeline.store, settings).run([first.job_id], "w")
    again = pipeline.submit(request, "port")
    assert again.cached and again.state == "done"
    assert sent(pipeline) == [[first.job_id]]


def test_many_submissions_go_out_in_batches_and_duplicates_once(pipeline: Pipeline) -> None:
    requests = [RetrievalRequest(query=f"crane {i}") for i in range(10)]
    refs = pipeline.submit_many([*requests, requests[0]], "port")
    assert [len(b) for b in sent(pipeline)] == [4, 4, 2]
    assert refs[0].job_id == refs[-1].job_id


def test_a_redelivered_job_is_skipped_and_the_index_is_built_once(
        pipeline: Pipeline, settings: Settings) -> None:
    refs = pipeline.submit_many([RetrievalRequest(query=f"tide {i}") for i in range(5)], "port")
    executor = Executor(pipeline.store, settings)
    ids = [r.job_id for r in refs]
    assert executor.run(ids, "w") == ["done"] * 5
    assert executor.run(ids, "w") == ["skipped:done"] * 5
    assert executor.cache.builds == 1
    events = [e for e in pipeline.store.ledger.events() if e.event == "done"]
    assert sorted(e.job for e in events) == sorted(ids)


def test_a_job_for_a_missing_corpus_fails_with_the_reason(pipeline: Pipeline,
                                                          settings: Settings) -> None:
    ref = pipeline.submit(RetrievalRequest(query="crane"), "port")
    digest = pipeline.job(ref.job_id).corpus_digest
    pipeline.store.client.delete(pipeline.store.keys.corpus_meta(digest))
    assert Executor(pipeline.store, settings).run([ref.job_id], "w") == ["failed"]
    record = pipeline.job(ref.job_id)
    assert record.state == "failed" and "no corpus" in (record.error or "")


def test_a_job_keyed_for_another_engine_is_refused(pipeline: Pipeline,
                                                   settings: Settings) -> None:
    ref = pipeline.submit(RetrievalRequest(query="crane"), "port")
    specs = pipeline.store.keys.shard(ref.job_id).job_specs
    recipe = orjson.loads(pipeline.store.client.hget(specs, ref.job_id))
    recipe["params"] = {"stopwords": "none"}
    pipeline.store.client.hset(specs, ref.job_id, orjson.dumps(recipe))
    assert Executor(pipeline.store, settings).run([ref.job_id], "w") == ["failed"]
    error = pipeline.job(ref.job_id).error or ""
    assert "the job's key does not match its recipe" in error and "resubmit it" in error


def test_the_sweeper_requeues_old_and_orphaned_jobs_and_fails_exhausted_ones(
        pipeline: Pipeline, settings: Settings) -> None:
    refs = pipeline.submit_many([RetrievalRequest(query=f"berth {i}") for i in range(3)],
                                "port")
    waiting, orphaned, exhausted = (r.job_id for r in refs)
    jobs = pipeline.store.jobs
    jobs.start([orphaned], "gone")
    for _ in range(settings.job_max_attempts):
        jobs.start([exhausted], "gone")
        assert jobs.begin(exhausted, "gone", max_attempts=99)[0] == "run"
        jobs.fail(exhausted, "ValueError: flaky", permanent=False, max_attempts=99)
    report = pipeline.sweep(older_than=0)
    assert set(report.requeued) == {waiting, orphaned}
    assert report.failed == [exhausted]
    assert pipeline.job(exhausted).error == "ValueError: flaky"
    assert pipeline.job(orphaned).state == "queued"
    assert sorted(sent(pipeline)[-1]) == sorted([waiting, orphaned])
    assert pipeline.sweep().requeued == []  # fresh again: nothing to do for sweep_after


def test_with_no_message_waiting_a_job_no_worker_received_is_swept_after_three_heartbeats(
        settings: Settings) -> None:
    now = [1_000.0]
    store = Store(fakeredis.FakeRedis(), "p", clock=lambda: now[0])
    dispatcher = RecordingDispatcher(ledger=store)
    pipe = Pipeline(store, dispatcher, settings)
    pipe.add_corpus(DOCS, "port")
    lost, held = (r.job_id for r in pipe.submit_many(
        [RetrievalRequest(query=f"berth {i}") for i in range(2)], "port"))
    store.jobs.deliver([held], "w1")  # in a live worker's hands, not started yet
    store.heartbeats.beat("w1", 600)
    assert settings.worker_heartbeat * 3 < settings.sweep_after
    now[0] += settings.worker_heartbeat * 3 - 1
    dispatcher.backlog = 0
    assert pipe.sweep().requeued == []  # too young to call lost
    now[0] += 2
    for backlog in (None, 7):  # unknown, or messages still waiting: SWEEP_AFTER applies
        dispatcher.backlog = backlog
        assert pipe.sweep().requeued == []
    dispatcher.backlog = 0
    assert pipe.sweep().requeued == [lost]
    events = [e for e in store.ledger.events() if e.job == lost and e.event == "requeued"]
    assert [e.detail for e in events] == ["queued, with no message waiting"]
    assert store.jobs.get(held).state == "queued"


def test_fresh_jobs_are_begun_by_their_claim_and_a_job_begun_before_runs_alone_after_them(
        pipeline: Pipeline, settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    refs = pipeline.submit_many([RetrievalRequest(query=f"berth {i}") for i in range(20)],
                                "port")
    ids = [r.job_id for r in refs]
    jobs = pipeline.store.jobs
    jobs.start([ids[3]], "dead")  # begun once by a worker that died: a suspect now
    jobs.begin(ids[3], "dead", settings.job_max_attempts)
    jobs.requeue(jobs.stale(queued_before=0, running_before=1e12, holding=lambda _: {},
                            limit=99)[0], settings.job_max_attempts)
    begun: list[list[str]] = []
    stored: list[list[str]] = []
    queue_begin, queue_put = jobs.queue_begin, pipeline.store.results.queue_put

    def spy_begin(round_, job_ids, worker, max_attempts, claim):  # type: ignore[no-untyped-def]
        begun.append(list(job_ids))
        return queue_begin(round_, job_ids, worker, max_attempts, claim)

    def spy_put(round_, offered):  # type: ignore[no-untyped-def]
        stored.append([o.key for o in offered])
        return queue_put(round_, offered)

    monkeypatch.setattr(jobs, "queue_begin", spy_begin)
    monkeypatch.setattr(pipeline.store.results, "queue_put", spy_put)
    monkeypatch.setattr(executor_module, "CHUNK", 8)  # small enough for twenty jobs to fill two
    assert Executor(pipeline.store, settings).run(ids, "w") == ["done"] * 20
    fresh = ids[:3] + ids[4:]
    # The fresh jobs cost no BEGIN and are stored a chunk at a time; the suspect is begun
    # and stored alone, after them.
    assert begun == [[ids[3]]]
    assert stored == [fresh[:8], fresh[8:16], fresh[16:], [ids[3]]]
    assert [pipeline.job(i).attempts for i in ids] == [1, 1, 1, 2] + [1] * 16


def test_a_chunk_is_stored_in_pieces_of_at_most_its_byte_bound_and_every_job_is_done(
        pipeline: Pipeline, settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    refs = pipeline.submit_many([RetrievalRequest(query=f"tide {i}") for i in range(10)],
                                "port")
    ids = [r.job_id for r in refs]
    stored: list[list[str]] = []
    queue_put = pipeline.store.results.queue_put

    def spy_put(round_, offered):  # type: ignore[no-untyped-def]
        stored.append([o.key for o in offered])
        return queue_put(round_, offered)

    monkeypatch.setattr(pipeline.store.results, "queue_put", spy_put)
    first = retrieve(pipeline.job(ids[0]).request, DOCS, settings.engine)
    size = len(canonical_bytes(first)) + len(canonical_bytes(first.audit))
    # Three results reach the bound (each of these is about the same size): stored then.
    monkeypatch.setattr(executor_module, "STORE_BYTES", 3 * size - 1)
    assert Executor(pipeline.store, settings).run(ids, "w") == ["done"] * 10
    assert stored == [ids[:3], ids[3:6], ids[6:9], ids[9:]]
    for job_id in ids:
        assert pipeline.result(job_id) == canonical_bytes(
            retrieve(pipeline.job(job_id).request, DOCS, settings.engine))


def test_a_time_limit_after_a_stored_piece_keeps_its_results_and_stores_the_rest_first(
        pipeline: Pipeline, settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    class TimeUp(Exception):
        pass

    refs = pipeline.submit_many([RetrievalRequest(query=f"delay {i}") for i in range(6)],
                                "port")
    ids = [r.job_id for r in refs]
    executor = Executor(pipeline.store, settings, fatal=(TimeUp,))
    get, calls = executor.cache.get, []

    def timed(*args: object) -> object:
        calls.append(args)
        if len(calls) == 5:  # the fifth ranking runs out of time
            raise TimeUp()
        return get(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(executor_module, "STORE_BYTES", 1)  # a piece of one result each
    monkeypatch.setattr(executor.cache, "get", timed)
    with pytest.raises(TimeUp):
        executor.run(ids, "w")
    assert [pipeline.job(i).state for i in ids[:4]] == ["done"] * 4
    assert pipeline.job(ids[4]).state == "queued"  # left for another attempt, saying why
    assert "soft time limit" in (pipeline.job(ids[4]).error or "")


@pytest.mark.parametrize("enabled", [True, False])
def test_a_message_runs_with_the_collector_paused_and_leaves_it_as_it_was(
        pipeline: Pipeline, settings: Settings, monkeypatch: pytest.MonkeyPatch,
        enabled: bool) -> None:
    refs = pipeline.submit_many([RetrievalRequest(query=f"quay {i}") for i in range(3)],
                                "port")
    executor = Executor(pipeline.store, settings)
    get, seen = executor.cache.get, []

    def watched(*args: object) -> object:
        seen.append(gc.isenabled())
        return get(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(executor.cache, "get", watched)
    was = gc.isenabled()
    try:
        gc.enable() if enabled else gc.disable()
        assert executor.run([r.job_id for r in refs], "w") == ["done"] * 3
        assert seen == [False] * 3  # each ranking with the collector paused
        assert gc.isenabled() is enabled
    finally:
        gc.enable() if was else gc.disable()


def test_claims_cost_no_attempt_and_a_job_that_never_finishes_fails_saying_why(
        pipeline: Pipeline, settings: Settings) -> None:
    (ref,) = pipeline.submit_many([RetrievalRequest(query="berth 1")], "port")
    jobs = pipeline.store.jobs
    for _ in range(5):  # claimed by a batch five times, never begun: a kill storm
        jobs.start([ref.job_id], "w1")
        assert jobs.requeue(jobs.stale(queued_before=0, running_before=0,
                                       holding=lambda _: {}, limit=9)[0], 3) == "requeue"
    assert pipeline.job(ref.job_id).attempts == 0
    for attempt in range(1, settings.job_max_attempts + 1):  # begun, then its process dies
        jobs.start([ref.job_id], "w2")
        assert jobs.begin(ref.job_id, "w2", settings.job_max_attempts) == ("run", attempt)
    jobs.start([ref.job_id], "w2")  # redelivered at once (task_reject_on_worker_lost)
    assert jobs.begin(ref.job_id, "w2", settings.job_max_attempts) == ("failed", 0)
    record = pipeline.job(ref.job_id)
    assert record.state == "failed" and record.attempts == settings.job_max_attempts
    assert "never finished: its worker process died each time" in (record.error or "")


def test_a_worker_only_begins_jobs_it_still_holds(pipeline: Pipeline) -> None:
    (ref,) = pipeline.submit_many([RetrievalRequest(query="berth 2")], "port")
    jobs = pipeline.store.jobs
    jobs.start([ref.job_id], "old")
    jobs.start([ref.job_id], "new")  # swept and claimed again elsewhere
    assert jobs.begin(ref.job_id, "old", 3) == ("running", 0)
    assert jobs.begin(ref.job_id, "new", 3) == ("run", 1)


def test_of_two_copies_of_a_message_only_the_later_begins(pipeline: Pipeline) -> None:
    # The sweeper's message and the broker's restored one, both started by one worker's
    # two pool processes: the job is computed and charged once, not twice.
    (ref,) = pipeline.submit_many([RetrievalRequest(query="berth 3")], "port")
    jobs = pipeline.store.jobs
    jobs.start([ref.job_id], "w", claim="w/first")
    jobs.start([ref.job_id], "w", claim="w/second")
    assert jobs.begin(ref.job_id, "w", 3, claim="w/first") == ("running", 0)
    assert jobs.begin(ref.job_id, "w", 3, claim="w/second") == ("run", 1)
    assert pipeline.job(ref.job_id).attempts == 1


def test_the_sweeper_closes_a_job_whose_result_is_already_stored(
        pipeline: Pipeline) -> None:
    ref = pipeline.submit(RetrievalRequest(query="crane"), "port")
    k = pipeline.store.keys.shard(ref.job_id)
    pipeline.store.client.set(k.result(ref.job_id), b"r")
    pipeline.store.client.hset(k.log_index, ref.job_id, 0)  # stored and logged
    assert pipeline.sweep(older_than=0).done == [ref.job_id]


def test_requests_over_the_limits_are_refused_before_anything_is_written(
        pipeline: Pipeline) -> None:
    with pytest.raises(InvalidRequestError, match="ROOKHAVEN_MAX_RECALL"):
        pipeline.submit(RetrievalRequest(query="crane", recallBudget=5000), "port")
    assert pipeline.store.jobs.counts() == {"queued": 0, "running": 0}
    with pytest.raises(InvalidRequestError, match="ROOKHAVEN_MAX_RECALL"):  # nor made
        pipeline.spec(RetrievalRequest(query="crane", recallBudget=5000),
                      pipeline.store.corpora.resolve("port"))


def test_celery_is_configured_for_json_only_and_at_least_once_delivery() -> None:
    conf = celery_config(Settings(redis_url="redis://h:1/0", key_prefix="k"))
    assert conf["accept_content"] == ["json"] and conf["task_serializer"] == "json"
    assert conf["task_acks_late"] and conf["task_reject_on_worker_lost"]
    assert conf["worker_prefetch_multiplier"] == 1 and conf["task_acks_on_failure_or_timeout"]
    options = conf["broker_transport_options"]
    assert options["visibility_timeout"] > conf["task_time_limit"]
    assert options["unacked_restore_interval"] <= 5 and options["global_keyprefix"] == "k:celery:"


def test_a_visibility_timeout_not_above_the_time_limit_is_refused() -> None:
    with pytest.raises(ConfigError, match="must exceed ROOKHAVEN_TASK_TIME_LIMIT"):
        Settings.from_mapping({"ROOKHAVEN_VISIBILITY_TIMEOUT": "60",
                               "ROOKHAVEN_TASK_TIME_LIMIT": "60"})


def _done_then_lost(pipeline: Pipeline, settings: Settings) -> dict[str, bytes]:
    refs = pipeline.submit_many([RetrievalRequest(query=f"crane {i} delay", seed=f"h{i}")
                                 for i in range(6)], "port")
    ids = [r.job_id for r in refs]
    Executor(pipeline.store, settings).run(ids, "w")
    before = {i: pipeline.result(i) for i in ids}
    for job_id in ids:  # an eviction or a partial restore: results gone, job records kept
        pipeline.store.client.delete(pipeline.store.keys.result(job_id))
    return before


def test_the_healing_sweep_recomputes_done_jobs_whose_result_is_gone(
        pipeline: Pipeline, settings: Settings) -> None:
    before = _done_then_lost(pipeline, settings)
    assert sorted(pipeline.heal()) == sorted(before)
    dispatcher = pipeline.dispatcher
    assert isinstance(dispatcher, RecordingDispatcher)
    assert sorted(dispatcher.sends[-1].job_ids) == sorted(before)
    assert {r.state for r in pipeline.store.jobs.get_many(list(before)) if r} == {"queued"}
    Executor(pipeline.store, settings).run(list(before), "w")
    assert {i: pipeline.result(i) for i in before} == before  # same keys, same bytes
    assert pipeline.heal() == []


def test_resubmitting_a_done_job_whose_result_is_gone_computes_it_again(
        pipeline: Pipeline, settings: Settings) -> None:
    before = _done_then_lost(pipeline, settings)
    ref = pipeline.submit(RetrievalRequest(query="crane 0 delay", seed="h0"), "port")
    assert ref.state == "queued" and not ref.cached and sent(pipeline)[-1] == [ref.job_id]
    Executor(pipeline.store, settings).run([ref.job_id], "w")
    assert pipeline.result(ref.job_id) == before[ref.job_id]


def test_a_job_stopped_by_the_time_limit_names_the_limit_and_its_setting(
        pipeline: Pipeline, settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    class TimeUp(Exception):
        pass

    def slow(*_: object) -> object:
        raise TimeUp()

    ref = pipeline.submit(RetrievalRequest(query="crane"), "port")
    executor = Executor(pipeline.store, settings, fatal=(TimeUp,))
    monkeypatch.setattr(executor.cache, "get", slow)  # the job's ranking runs out of time
    with pytest.raises(TimeUp):
        executor.run([ref.job_id], "w")
    error = pipeline.job(ref.job_id).error or ""
    assert error.startswith("TimeUp: ran past the soft time limit of 108 s (90% of "
                            "ROOKHAVEN_TASK_TIME_LIMIT=120 s)"), error


def test_a_worker_logs_one_info_line_per_message_and_a_debug_line_per_job(
        pipeline: Pipeline, settings: Settings, caplog: pytest.LogCaptureFixture,
        monkeypatch: pytest.MonkeyPatch) -> None:
    refs = pipeline.submit_many([RetrievalRequest(query=f"tide {i}") for i in range(3)], "port")
    ids = [r.job_id for r in refs]
    # caplog's handler on the logger itself: configure_logging (run by an earlier test or a
    # CLI call) stops propagation from "rookhaven" to the root logger caplog listens on.
    pipeline_log = logging.getLogger("rookhaven.pipeline")
    monkeypatch.setattr(pipeline_log, "handlers", [caplog.handler])
    monkeypatch.setattr(pipeline_log, "propagate", False)
    with caplog.at_level(logging.DEBUG, logger="rookhaven.pipeline"):
        executor = Executor(pipeline.store, settings)
        executor.run(ids, "w")
        executor.run(ids[:1], "w")
    jobs = [r for r in caplog.records if r.getMessage().startswith("job ")]
    assert [(r.levelno, r.job, r.state) for r in jobs] == (  # type: ignore[attr-defined]
        [(logging.DEBUG, job_id, "done") for job_id in ids]
        + [(logging.DEBUG, ids[0], "skipped:done")])
    assert all(r.seconds >= 0 for r in jobs)  # type: ignore[attr-defined]
    assert jobs[0].getMessage() == f"job {ids[0]} done in {jobs[0].seconds:.3f} s"  # type: ignore[attr-defined]
    messages = [r for r in caplog.records if r.levelno == logging.INFO]
    assert [(r.jobs, r.first, r.states) for r in messages] == [  # type: ignore[attr-defined]
        (3, ids[0], {"done": 3}), (1, ids[0], {"skipped:done": 1})]
    assert messages[0].getMessage() == (
        f"3 job(s) (first {ids[0]}) in {messages[0].seconds:.3f} s: 3 done")  # type: ignore[attr-defined]


def test_the_message_line_is_emitted_at_the_default_log_level(
        pipeline: Pipeline, settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    ref = pipeline.submit(RetrievalRequest(query="crane"), "port")
    root = logging.getLogger("rookhaven")
    monkeypatch.setattr(root, "handlers", list(root.handlers))
    monkeypatch.setattr(root, "level", root.level)
    monkeypatch.setattr(root, "propagate", root.propagate)
    stderr = io.StringIO()
    monkeypatch.setattr("sys.stderr", stderr)
    configure_logging(Settings().log_level)
    Executor(pipeline.store, settings).run([ref.job_id], "w")
    (entry,) = [orjson.loads(line) for line in stderr.getvalue().splitlines()
                if orjson.loads(line).get("first") == ref.job_id]
    assert entry["level"] == "info" and entry["states"] == {"done": 1} and entry["jobs"] == 1
    assert entry["msg"].startswith(f"1 job(s) (first {ref.job_id}) in ")
    assert entry["seconds"] >= 0


def test_a_rebound_cache_keeps_built_indexes_and_loads_misses_its_own_way(
        pipeline: Pipeline, settings: Settings) -> None:
    digest = pipeline.store.corpora.resolve("port")
    parent = Executor(pipeline.store, settings).cache
    built = parent.get(digest, settings.engine, {})
    loads: list[str] = []

    def load(d: str):  # type: ignore[no-untyped-def]
        loads.append(d)
        return pipeline.store.corpora.load(d)

    child = parent.rebound(load)
    assert child.get(digest, settings.engine, {}) is built and loads == []
    other = pipeline.add_corpus(DOCS[:10], "small").digest
    child.get(other, settings.engine, {})
    assert loads == [other] and len(parent) == 1


def test_recent_corpora_are_listed_newest_first() -> None:
    ticks = iter(range(1_000, 2_000))
    store = Store(fakeredis.FakeRedis(), "r", clock=lambda: float(next(ticks)))
    first = store.corpora.put(Corpus(DOCS), "port").digest
    second = store.corpora.put(Corpus(DOCS[:5]), "small").digest
    assert store.corpora.recent(1) == [second]
    assert store.corpora.recent(5) == [second, first]
    assert store.corpora.recent(0) == []


def test_prefetching_more_corpora_than_the_cache_holds_is_refused() -> None:
    with pytest.raises(ConfigError, match=r"ROOKHAVEN_WORKER_PREFETCH \(5\) exceeds"):
        Settings.from_mapping({"ROOKHAVEN_WORKER_PREFETCH": "5"})


def test_a_job_whose_record_vanishes_while_it_runs_is_stored_not_done(
        store: Store, settings: Settings, caplog: pytest.LogCaptureFixture) -> None:
    # What a Redis restart that dropped acknowledged writes (appendfsync everysec) leaves: the
    # worker holds the job's spec, the store no longer has its record.
    class Forgetful(Executor):
        def _compute_chunk(self, chunk: Any, begun: Any, round_: Any, outcomes: Any) -> Any:
            stored = super()._compute_chunk(chunk, begun, round_, outcomes)
            for job_id, _, _ in chunk:
                shard = store.keys.shard(job_id)
                store.client.hdel(shard.job_states, job_id)
                store.client.hdel(shard.job_specs, job_id)
            return stored

    executor = Forgetful(store, settings)
    pipe = Pipeline(store, RecordingDispatcher(ledger=store), settings)
    pipe.add_corpus(DOCS, "port")
    kept, forgotten = (pipe.submit(RetrievalRequest(query=q), "port") for q in ("crane", "tide"))
    assert Executor(store, settings).run([kept.job_id], "w") == ["done"]
    with caplog.at_level(logging.WARNING, logger="rookhaven"):
        assert executor.run([forgotten.job_id], "w") == ["stored"]
    assert "1 job record(s) vanished while their jobs ran" in caplog.text
    assert pipe.result(forgotten.result_key) == canonical_bytes(
        retrieve(RetrievalRequest(query="tide"), Corpus(DOCS), "tfcosine@1"))
    assert pipe.submit(RetrievalRequest(query="tide"), "port").cached


def test_waiting_records_again_a_job_whose_record_a_failover_took(
        pipeline: Pipeline, settings: Settings) -> None:
    asked = [RetrievalRequest(query=f"tide {i}", seed=f"w{i}") for i in range(3)]
    kept, lost, answered = (r.job_id for r in pipeline.submit_many(asked, "port"))
    Executor(pipeline.store, settings).run([kept], "w")
    forget_job(pipeline.store, lost)  # recorded, its message sent, then gone with a primary
    Executor(pipeline.store, settings).run([answered], "w")
    again: list[list[str]] = []

    def resubmit(ids: list[str]) -> None:
        again.append(ids)
        refs = pipeline.submit_many([asked[1]], "port")
        Executor(pipeline.store, settings).run([r.job_id for r in refs], "w")

    records = pipeline.wait_many([kept, lost, answered], 10, resubmit=resubmit)
    assert again == [[lost]]
    assert [r.state if r else None for r in records] == ["done"] * 3
    assert pipeline.result(lost) == canonical_bytes(retrieve(asked[1], DOCS, settings.engine))


def test_a_long_wait_says_how_many_jobs_are_open_and_what_moves_them(
        pipeline: Pipeline, settings: Settings) -> None:
    refs = pipeline.submit_many([RetrievalRequest(query=f"crane {i}") for i in range(3)],
                                "port")
    pipeline.store.jobs.start([refs[0].job_id], "w1")
    heard: list[str] = []
    with pytest.raises(WaitTimeoutError, match=r"3 of 3 job\(s\) are not done after 0.2 s "
                       r"\(2 queued, 1 running; first: .*the sweeper"):
        pipeline.wait_many([r.job_id for r in refs], 0.2, progress=heard.append, every=0)
    assert heard and heard[0] == "waiting for 3 of 3 job(s): 2 queued, 1 running"


@pytest.mark.parametrize("engine", ["tfcosine@1", "bm25@2", "bm25@6"])
def test_a_workers_log_leaf_names_the_engine_its_audit_names(
        pipeline: Pipeline, settings: Settings, engine: str) -> None:
    # The executor gives the log leaf its engine instead of parsing each audit for it: the
    # leaf must be the one the audit alone gives.
    refs = pipeline.submit_many([RetrievalRequest(query=f"crane {i}") for i in range(3)],
                                "port", engine)
    Executor(pipeline.store, settings).run([r.job_id for r in refs], "w")
    leaves = dict(pipeline.store.logs[0].leaves())
    for ref in refs:
        log = pipeline.store.log_of(ref.job_id)
        stored = parse_leaf(leaves[log.index_of(ref.job_id)])
        assert stored is not None
        again = leaf_for(ref.job_id, pipeline.result(ref.job_id), pipeline.audit(ref.job_id),
                         ref.corpus_digest, stored.stored)
        assert stored == again and stored.engine["version"].endswith(engine.split("@")[1])
