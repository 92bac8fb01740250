"""The verifier on fakeredis: clean stores verify under every engine, tampering alarms."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import fakeredis
import orjson
import pytest

from rookhaven import Document, RetrievalRequest, Retriever, TfCosineProvider, canonical_bytes
from rookhaven.config import Settings
from rookhaven.pipeline import Executor, Pipeline, RecordingDispatcher
from rookhaven.store import Store
from rookhaven.store.audits import AuditIndex
from rookhaven.verification import Selection, Verifier
from rookhaven.verification.replay import Replayer
from tests.results_support import forget_job

DOCS = [Document(id=f"d{i:02d}", text=f"crane {i} berth {i % 4} tide {i % 3} delay")
        for i in range(30)]
QUERIES = ["crane and tide", "berth 2, delay", "tide 1 plus crane 3", "delay"]


@pytest.fixture
def settings() -> Settings:
    return Settings(engine="tfcosine@1", batch_size=10)


@pytest.fixture
def pipeline(settings: Settings) -> Iterator[Pipeline]:
    client = fakeredis.FakeRedis()
    pipe = Pipeline(Store(client, "v"), RecordingDispatcher(ledger=Store(client, "v")), settings)
    pipe.add_corpus(DOCS, "port")
    refs = pipe.submit_many([RetrievalRequest(query=q, seed=f"s{i}")
                             for i, q in enumerate(QUERIES)], "port")
    Executor(pipe.store, settings).run([r.job_id for r in refs], "w")
    yield pipe
    client.close()


def verifier(pipeline: Pipeline) -> Verifier:
    return Verifier(pipeline.store, pipeline.settings, clock=lambda: 1_767_225_600.0)


def keys(pipeline: Pipeline) -> list[str]:
    return [k for k, _ in pipeline.store.audits.scan()]


def test_an_untouched_store_verifies_clean(pipeline: Pipeline) -> None:
    run = verifier(pipeline).run(Selection(all=True))
    assert (run.checked, run.matched, run.alarms) == (4, 4, 0)
    assert run.clean


def test_one_tampered_result_byte_is_an_alarm_naming_the_key_and_field(pipeline: Pipeline) -> None:
    key = keys(pipeline)[1]
    redis_key = pipeline.store.keys.result(key)
    data = pipeline.store.client.get(redis_key)
    result = orjson.loads(data)
    first_id = result["hits"][0]["id"]
    at = data.index(b'"hits":')  # keys are sorted, so the embedded audit comes first
    tampered = data[:at] + data[at:].replace(f'"id":"{first_id}"'.encode(), b'"id":"d99"', 1)
    assert len(tampered) == len(data) and tampered != data
    pipeline.store.client.set(redis_key, tampered)
    run = verifier(pipeline).run(Selection(all=True))
    (bad,) = [v for v in run.verdicts if v.alarm]
    assert (bad.key, bad.outcome, bad.where) == (key, "mismatch", "hits[0].id")
    assert run.alarms == 1 and run.matched == 3
    # Who stored the bytes, from the job record: the fixture's worker is "w".
    assert bad.detail.startswith("stored by its job, finished on worker w at 20"), bad.detail


def test_an_audit_edited_inside_its_result_cannot_pass_tampering_off_as_drift(
        pipeline: Pipeline) -> None:
    # The audit is stored once, inside its result (ADR 0064): an edit to its recipe makes
    # the replay compute another key, and an edit to its engine names one that gives
    # another key or none this install has. Each is an alarm, never drift.
    first, second = keys(pipeline)[:2]
    client, k = pipeline.store.client, pipeline.store.keys
    data = client.get(k.result(first))
    seed = orjson.loads(data)["audit"]["seed"]
    client.set(k.result(first), data.replace(f'"seed":"{seed}"'.encode(), b'"seed":"edited"'))
    data = client.get(k.result(second))
    client.set(k.result(second), data.replace(b'"version":"1.1"', b'"version":"0.9"'))
    found = {v.key: v for v in verifier(pipeline).run(Selection(keys=[first, second])).verdicts}
    assert (found[first].outcome, found[first].alarm, found[first].where) == (
        "wrong-key", True, "result key")
    assert (found[second].outcome, found[second].alarm) == ("unreplayable", True)
    assert client.exists(k.audit(first), k.audit(second)) == 0  # no second copy to edit


@pytest.mark.parametrize(("planted", "where"), [
    (b"planted", "audit"), (b'{"hits":[],"audit":{}}', "audit.engine"),
    (b'{"audit":{"seed":"s"},"hits":[]}', "audit.engine")])
def test_bytes_that_hold_no_audit_naming_an_engine_are_a_mismatch(
        pipeline: Pipeline, planted: bytes, where: str) -> None:
    key = keys(pipeline)[0]
    pipeline.store.client.set(pipeline.store.keys.result(key), planted)
    (verdict,) = verifier(pipeline).run(Selection(keys=[key])).verdicts
    assert (verdict.outcome, verdict.alarm, verdict.where) == ("mismatch", True, where)
    assert "stored by its job, finished on worker w" in verdict.detail, verdict.detail


def test_a_result_no_job_stored_is_an_alarm_saying_another_writer_shares_the_store(
        pipeline: Pipeline) -> None:
    # As reported in issue 30: a result whose audit lacks its config, under a key no job of
    # this store ever had.
    source = keys(pipeline)[0]
    audit = orjson.loads(pipeline.store.results.audit(source))
    hits = orjson.loads(pipeline.store.results.get(source))["hits"]
    foreign = "sha256:" + "b5" * 32
    without = {k: v for k, v in audit.items() if k != "config"}
    client = pipeline.store.client
    client.set(pipeline.store.keys.result(foreign), canonical_bytes({"audit": without,
                                                                     "hits": hits}))
    (verdict,) = verifier(pipeline).run(Selection(keys=[foreign])).verdicts
    assert (verdict.outcome, verdict.alarm) == ("no-recipe", True), verdict
    assert "no Rookhaven job under this key stored it" in verdict.detail, verdict.detail
    # A job that exists but never finished did not store it either.
    job = pipeline.spec(RetrievalRequest(query="crane 9", seed="q"),
                        pipeline.store.corpora.resolve("port"), "tfcosine@1", None)
    pipeline.store.jobs.create(job)
    client.set(pipeline.store.keys.result(job.key), pipeline.store.results.get(source))
    (verdict,) = verifier(pipeline).run(Selection(keys=[job.key])).verdicts
    assert verdict.outcome == "wrong-key"
    assert "its job is queued, not done, so no Rookhaven job stored it" in verdict.detail


def _store_made_by(pipeline: Pipeline, engine: str, request: RetrievalRequest,
                   params: dict[str, object] | None = None) -> str:
    digest = pipeline.store.corpora.resolve("port")
    spec = pipeline.spec(request, digest, engine, params)
    pipeline.store.jobs.create(spec)
    Executor(pipeline.store, pipeline.settings).run([spec.key], "w")
    return spec.key


def test_every_installed_engine_replays_byte_for_byte_without_its_job_record(
        pipeline: Pipeline) -> None:
    made = [_store_made_by(pipeline, engine, RetrievalRequest(query="crane 7 and berth 3",
                                                              seed=engine), params)
            for engine, params in (("bm25@1", {"k1": 0.9}), ("bm25@2", {"b": 0.5}),
                                   ("bm25@2", {"synonyms": {"quay": ["berth"]}}),
                                   ("tfcosine@1", {"stemmer": "english"}))]
    for key in keys(pipeline):
        forget_job(pipeline.store, key)
    run = verifier(pipeline).run(Selection(all=True))
    assert (run.checked, run.matched, run.alarms, run.drift) == (8, 8, 0, 0)
    # Each by the engine that made it (the fixture's four results by tfcosine@1);
    # matches are counted per engine, not listed one by one.
    assert run.verdicts == []
    assert run.matched_by_engine == {"bm25@1": 1, "bm25@2": 2, "tfcosine@1": 5}
    recorded = orjson.loads(pipeline.store.verifications.get(run.run_id))
    assert (recorded["verdicts"], recorded["matched"]) == ([], 8)
    assert len(made) == 4


def test_an_old_engine_result_with_synonyms_needs_its_job_record(pipeline: Pipeline) -> None:
    key = _store_made_by(pipeline, "bm25@1", RetrievalRequest(query="quay", seed="x"),
                         {"synonyms": {"quay": ["berth"]}})
    run = verifier(pipeline).run(Selection(keys=[key]))
    assert (run.matched, run.verdicts) == (1, [])  # the job record holds what the audit
    # kept as a digest
    forget_job(pipeline.store, key)
    (verdict,) = verifier(pipeline).run(Selection(keys=[key])).verdicts
    assert (verdict.outcome, verdict.alarm) == ("no-recipe", True)


def test_a_result_from_an_engine_this_install_lacks_is_an_alarm_naming_it(
        pipeline: Pipeline) -> None:
    request = RetrievalRequest(query="crane 7 and berth 3", seed="old")
    digest = pipeline.store.corpora.resolve("port")
    old = Retriever(DOCS, TfCosineProvider(version="0")).retrieve(request)
    pipeline.store.results.put("sha256:" + "0" * 64, digest, canonical_bytes(old),
                               canonical_bytes(old.audit))
    (verdict,) = verifier(pipeline).run(Selection(keys=["sha256:" + "0" * 64])).verdicts
    assert (verdict.outcome, verdict.alarm) == ("unreplayable", True)
    assert "tfcosine@0" in verdict.detail and "does not have" in verdict.detail
    assert verdict.stored_engine == "tfcosine@0"


def test_bytes_stored_under_another_requests_key_are_a_wrong_key_alarm(
        pipeline: Pipeline) -> None:
    first, second = keys(pipeline)[:2]
    pipeline.store.client.set(pipeline.store.keys.result(first),
                              pipeline.store.results.get(second))
    (verdict,) = verifier(pipeline).run(Selection(keys=[first])).verdicts
    assert (verdict.outcome, verdict.alarm, verdict.where) == ("wrong-key", True, "result key")
    assert second in verdict.detail


def test_a_deleted_corpus_is_an_alarm(pipeline: Pipeline) -> None:
    digest = pipeline.store.corpora.resolve("port")
    pipeline.store.client.delete(pipeline.store.keys.corpus_meta(digest))
    run = verifier(pipeline).run(Selection(all=True))
    assert {v.outcome for v in run.verdicts} == {"missing-corpus"}
    assert run.alarms == 4


def test_a_run_over_everything_streams_what_was_stored_when_it_began_and_lists_no_keys(
        pipeline: Pipeline, settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    # One key a page, so the scan is still running when a new result is stored mid-run.
    scan, replay_many = AuditIndex.scan, Replayer.replay_many
    monkeypatch.setattr(AuditIndex, "scan", lambda self, **kw: scan(self, **{**kw, "page": 1}))
    monkeypatch.setattr(Replayer, "replay_many",
                        lambda self, keys, page=500: replay_many(self, keys, page=1))
    seen: list[tuple[int, int]] = []

    def progress(done: int, total: int) -> None:
        if not seen:  # a result stored after the run began is the next run's to check
            ref = pipeline.submit(RetrievalRequest(query="crane 7", seed="later"), "port")
            Executor(pipeline.store, settings).run([ref.job_id], "w")
        seen.append((done, total))

    run = verifier(pipeline).run(Selection(all=True), progress=progress)
    assert (run.checked, run.matched, run.alarms) == (4, 4, 0)
    assert seen == [(1, 4), (2, 4), (3, 4), (4, 4)]
    assert run.keys == [] and len(keys(pipeline)) == 5
    assert verifier(pipeline).run(Selection(all=True)).checked == 5


def test_a_sample_records_its_seed_and_keys_and_redraws_the_same_keys(
        pipeline: Pipeline) -> None:
    first = verifier(pipeline).run(Selection(sample=2, seed="night-7"))
    again = verifier(pipeline).run(Selection(sample=2, seed="night-7", stratify="none"))
    assert first.sample_seed == "night-7" and len(first.keys) == 2
    assert verifier(pipeline).choose(Selection(sample=2, seed="night-7")) == (first.keys,
                                                                            "night-7")
    assert len(again.keys) == 2


def test_runs_alarms_and_counters_are_recorded_in_the_store(pipeline: Pipeline) -> None:
    pipeline.store.client.set(pipeline.store.keys.result(keys(pipeline)[0]), b"{}")
    run = verifier(pipeline).run(Selection(all=True))
    log = pipeline.store.verifications
    assert log.latest() == [run.run_id]
    assert orjson.loads(log.get(run.run_id))["alarms"] == 1
    (alert,) = log.alerts()
    assert alert["key"] == keys(pipeline)[0] and alert["outcome"] == "mismatch"
    verify_counters = {k: v for k, v in log.counters().items() if k.startswith("verify_")}
    assert verify_counters == {"verify_alarms": 1, "verify_checked": 4, "verify_drift": 0,
                               "verify_matched": 3, "verify_runs": 1}


def test_a_store_emptied_or_short_of_what_it_stored_is_an_alarm_saying_so(
        pipeline: Pipeline) -> None:
    store = pipeline.store
    victim = keys(pipeline)[0]
    store.client.zrem(store.keys.shards[0].audits_by_time, victim)  # a partial restore lost one
    run = verifier(pipeline).run(Selection(all=True))
    assert [(v.outcome, v.key) for v in run.verdicts if v.alarm] == [("results-missing", "store")]
    assert "fewer than the 4" in run.verdicts[0].detail and not run.clean
    store.client.flushall()  # a Redis restarted empty, counters, log and all
    run = verifier(pipeline).run(Selection(all=True))
    assert [(v.outcome, v.key) for v in run.verdicts] == [("nothing-checked", "store")]
    assert run.checked == 0 and run.alarms == 1 and not run.clean


def test_history_shows_open_jobs_now_apart_from_the_running_totals(pipeline: Pipeline) -> None:
    from rookhaven.cli.verify import history

    verifier(pipeline).run(Selection(all=True))
    pipeline.submit(RetrievalRequest(query="crane 7 berth", seed="open"), "port")
    shown = history(pipeline.store)
    # Four jobs ran and one is still queued: the totals count every start, the live counts
    # show what is open at this moment, and no bare `jobs_running` reads as either.
    assert shown["jobs_open_now"] == {"queued": 1, "running": 0}
    assert shown["totals"]["job_events"]["running"] == 4
    assert shown["totals"]["job_events"]["queued"] == 5
    assert shown["totals"]["verify_runs"] == 1
    assert "jobs_running" not in orjson.dumps(shown).decode()
    assert len(shown["runs"]) == 1 and shown["as_of"] > 0


def test_a_store_wide_alarm_gets_its_error_line_like_every_other_alarm(
        pipeline: Pipeline, caplog: pytest.LogCaptureFixture,
        monkeypatch: pytest.MonkeyPatch) -> None:
    store = pipeline.store
    store.client.zrem(store.keys.shards[0].audits_by_time, keys(pipeline)[0])
    # On the logger itself: an earlier configure_logging stops propagation to caplog's root.
    verify_log = logging.getLogger("rookhaven.verify")
    monkeypatch.setattr(verify_log, "handlers", [caplog.handler])
    monkeypatch.setattr(verify_log, "propagate", False)
    with caplog.at_level("ERROR", logger="rookhaven.verify"):
        run = verifier(pipeline).run(Selection(all=True))
    logged = [r.__dict__.get("outcome") for r in caplog.records if r.levelname == "ERROR"]
    assert logged == [v.outcome for v in run.verdicts if v.alarm] == ["results-missing"]


def test_a_page_of_every_outcome_gives_each_key_its_own_verdict_in_order(
        pipeline: Pipeline) -> None:
    # A page is replayed in passes (recipes, engine calls, comparisons): each verdict must
    # still be its own key's, in the keys' order, as when the keys are replayed one by one.
    extra = [RetrievalRequest(query=f"crane {i} and tide {i % 3}", seed=f"x{i}")
             for i in range(6)]
    refs = pipeline.submit_many(extra, "port")
    Executor(pipeline.store, pipeline.settings).run([r.job_id for r in refs], "w")
    stored = keys(pipeline)
    tampered, swapped, gone = stored[1], stored[4], stored[7]
    client, k = pipeline.store.client, pipeline.store.keys
    data = client.get(k.result(tampered))
    at = data.index(b'"rank":1')
    client.set(k.result(tampered), data[:at] + b'"rank":7' + data[at + 8:])
    client.set(k.result(swapped), client.get(k.result(stored[5])))
    client.delete(k.result(gone))
    order = [*stored, "sha256:" + "1" * 64]
    replayer = Replayer(pipeline.store, pipeline.settings)
    paged = list(replayer.replay_many(order, page=len(order)))
    alone = [replayer.replay(key) for key in order]
    assert [v.key for v in paged] == order
    assert paged == alone
    outcomes = {v.key: v.outcome for v in paged}
    assert (outcomes[tampered], outcomes[swapped], outcomes[gone], outcomes[order[-1]]) == (
        "mismatch", "wrong-key", "missing-result", "missing-result")
    assert [o for key, o in outcomes.items() if key not in (tampered, swapped, gone,
                                                           order[-1])] == ["match"] * 7


def test_an_audit_naming_its_engine_by_a_list_is_an_alarm_not_a_crash(
        pipeline: Pipeline) -> None:
    key = keys(pipeline)[0]
    client, k = pipeline.store.client, pipeline.store.keys
    result = orjson.loads(client.get(k.result(key)))
    result["audit"]["engine"] = [{"name": "bm25"}]
    client.set(k.result(key), canonical_bytes(result))
    (verdict,) = verifier(pipeline).run(Selection(keys=[key])).verdicts
    assert (verdict.outcome, verdict.alarm) == ("unreplayable", True)


def test_a_mismatch_whose_job_record_was_edited_too_says_so_and_the_run_goes_on(
        pipeline: Pipeline) -> None:
    first, second = keys(pipeline)[:2]
    for key in (first, second):  # both results tampered, one job record made unreadable
        redis_key = pipeline.store.keys.result(key)
        data = pipeline.store.client.get(redis_key)
        pipeline.store.client.set(redis_key, data.replace(b'"rank":1', b'"rank":7', 1))
    pipeline.store.client.hset(pipeline.store.keys.shard(second).job_specs, second, b"{not json")
    run = verifier(pipeline).run(Selection(keys=[first, second]))
    details = {v.key: v.detail for v in run.verdicts if v.outcome == "mismatch"}
    assert details[first].startswith("stored by its job, finished on worker w"), details
    assert details[second] == ("its job record does not parse (JSONDecodeError): it was "
                               "edited too"), details
