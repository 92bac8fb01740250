"""Quick recipes (verification.frames): the same recipe as the full read, or none at all."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import fakeredis
import orjson
import pytest

from rookhaven import Document, RetrievalRequest
from rookhaven.config import Settings
from rookhaven.core.recipe import recipe_of
from rookhaven.pipeline import Executor, Pipeline, RecordingDispatcher
from rookhaven.store import Store
from rookhaven.verification.frames import Frames
from rookhaven.verification.replay import Replayer
from tests.results_support import forget_job

DOCS = [Document(id=f"d{i:02d}", fields={"title": f"quay {i % 5}"},
                 text=f"crane {i} berth {i % 4} tide {i % 3} delay")
        for i in range(40)]
QUERIES = ["crane and tide", "berth 2, delay", "tide 1 plus crane 3", "delay", "quay \"4\" \\ é"]


@pytest.fixture(params=["bm25@2", "bm25@3", "tfcosine@1"])
def pipeline(request: pytest.FixtureRequest) -> Iterator[Pipeline]:
    settings = Settings(engine=request.param, batch_size=10)
    client = fakeredis.FakeRedis()
    pipe = Pipeline(Store(client, "q"), RecordingDispatcher(ledger=Store(client, "q")), settings)
    pipe.add_corpus(DOCS, "port")
    refs = pipe.submit_many([RetrievalRequest(query=q, seed=f"s{i}", recall_budget=3 + i)
                             for i, q in enumerate(QUERIES)], "port")
    Executor(pipe.store, settings).run([r.job_id for r in refs], "w")
    yield pipe
    client.close()


def stored(pipeline: Pipeline) -> list[tuple[str, bytes, bytes]]:
    found = [k for k, _ in pipeline.store.audits.scan()]
    results = pipeline.store.results
    return [(k, r, a) for k, r, a in zip(found, results.get_many(found),
                                          results.audit_many(found), strict=True)
            if r is not None and a is not None]


def learned(pipeline: Pipeline) -> tuple[Replayer, list[tuple[str, bytes, bytes]]]:
    replayer = Replayer(pipeline.store, pipeline.settings)
    rows = stored(pipeline)
    # The frame is met by a page replayed the full way (a lone replay teaches nothing).
    assert [v.outcome for v in replayer.replay_many([rows[0][0]])] == ["match"]
    return replayer, rows


def test_a_quick_recipe_is_the_full_reads_recipe_for_every_stored_result(
        pipeline: Pipeline) -> None:
    replayer, rows = learned(pipeline)
    for _, _, audit in rows:
        quick = replayer._frames.recipe(audit)
        full = recipe_of(orjson.loads(audit))
        assert quick is not None and full is not None
        assert quick[0] == full
        assert quick[1] == replayer.executor.cache.get(full.corpus_digest, full.engine.ref,
                                                       full.params).config_digest


def test_no_quick_recipe_for_a_configuration_not_met_or_an_audit_that_differs_from_it(
        pipeline: Pipeline) -> None:
    _, rows = learned(pipeline)
    audit = rows[1][2]
    assert Frames().recipe(audit) is None
    replayer, _ = learned(pipeline)
    frames = replayer._frames
    edits = [
        (b'"corpus_digest":"sha256:', b'"corpus_digest":"sha256:0'),  # another corpus
        (b'"engine":{"name":"', b'"engine":{"name":"x'),  # another engine
        (b'"config":{', b'"config":{"a":1,'),  # another configuration
        (b'"streams":', b'"stream":'),  # the recipe's end not where it is expected
        (b'"seed":"', b'"seed":1,"x":"'),  # a request that does not validate
        (b'"query":', b'"query":1,"q":'),
    ]
    for old, new in edits:
        assert old in audit, old
        assert frames.recipe(audit.replace(old, new, 1)) is None, new
    assert frames.recipe(b"[]") is None
    assert frames.recipe(audit[:-40]) is not None  # the hit lists are not read


def test_a_page_replayed_quickly_gives_every_verdict_a_lone_replay_gives(
        pipeline: Pipeline, monkeypatch: pytest.MonkeyPatch) -> None:
    replayer, rows = learned(pipeline)
    full: list[str] = []
    prepare = Replayer._prepare
    monkeypatch.setattr(Replayer, "_prepare",
                        lambda self, key, got: full.append(key) or prepare(self, key, got))
    client, k = pipeline.store.client, pipeline.store.keys
    # Both copies of one audit edited alike (its seed): one encoding still, but its recipe
    # is another key's. Another result's hits edited: its audit still reads quickly.
    key, result, audit = rows[1]
    edited = audit.replace(b'"seed":"s', b'"seed":"t', 1)
    client.set(k.audit(key), edited)
    client.set(k.result(key), result.replace(audit, edited, 1))
    key2, result2, _ = rows[2]
    at = result2.index(b'"rank":1')
    client.set(k.result(key2), result2[:at] + b'"rank":9' + result2[at + 8:])
    order = [key for key, _, _ in rows]
    paged = list(replayer.replay_many(order, page=len(order)))
    assert full == [key, key2]  # read the full way: the two that are not matches
    alone = [Replayer(pipeline.store, pipeline.settings).replay(key) for key in order]
    assert paged == alone
    assert [v.outcome for v in paged] == ["match", "wrong-key", "mismatch"] + ["match"] * (
        len(order) - 3)


@pytest.mark.parametrize("enabled", [True, False])
def test_the_collector_is_left_as_the_caller_had_it(pipeline: Pipeline, enabled: bool) -> None:
    replayer, rows = learned(pipeline)
    was = gc.isenabled()
    try:
        gc.enable() if enabled else gc.disable()
        verdicts = replayer.replay_many([key for key, _, _ in rows], page=2)
        assert next(verdicts).outcome == "match"
        assert gc.isenabled() is enabled  # between pages, as the caller had it
        verdicts.close()
        assert gc.isenabled() is enabled
    finally:
        gc.enable() if was else gc.disable()


def test_a_recipe_completed_from_a_job_record_teaches_nothing() -> None:
    # bm25@1 keeps its synonyms in the audit as a digest: each key's parameters come from
    # its own job record, so a lost record is "no-recipe" whatever the page held before.
    settings = Settings(engine="tfcosine@1", batch_size=10)
    client = fakeredis.FakeRedis()
    pipe = Pipeline(Store(client, "j"), RecordingDispatcher(ledger=Store(client, "j")),
                    settings)
    pipe.add_corpus(DOCS, "port")
    digest = pipe.store.corpora.resolve("port")
    keys = []
    for query in ("quay", "quay berth", "quay crane 3"):
        spec = pipe.spec(RetrievalRequest(query=query, seed="x"), digest, "bm25@1",
                         {"synonyms": {"quay": ["berth"]}})
        pipe.store.jobs.create(spec)
        Executor(pipe.store, settings).run([spec.key], "w")
        keys.append(spec.key)
    for key in keys[1:]:
        forget_job(pipe.store, key)
    paged = list(Replayer(pipe.store, settings).replay_many(keys))
    alone = [Replayer(pipe.store, settings).replay(key) for key in keys]
    assert paged == alone
    assert [v.outcome for v in paged] == ["match", "no-recipe", "no-recipe"]
    client.close()


def test_one_configuration_over_two_corpora_reads_both_quickly(
        monkeypatch: pytest.MonkeyPatch) -> None:
    settings = Settings(engine="bm25@2", batch_size=10, index_cache_size=2)
    client = fakeredis.FakeRedis()
    pipe = Pipeline(Store(client, "c"), RecordingDispatcher(ledger=Store(client, "c")),
                    settings)
    pipe.add_corpus(DOCS, "port")
    pipe.add_corpus(DOCS[:25], "harbour")
    refs = [ref for i in range(6) for ref in pipe.submit_many(
        [RetrievalRequest(query=f"crane {i} tide", seed=f"s{i}")], "port" if i % 2 else
        "harbour")]
    Executor(pipe.store, settings).run([r.job_id for r in refs], "w")
    order = [r.job_id for r in refs]
    replayer = Replayer(pipe.store, settings)
    assert {v.outcome for v in replayer.replay_many(order)} == {"match"}
    full: list[str] = []
    prepare = Replayer._prepare
    monkeypatch.setattr(Replayer, "_prepare",
                        lambda self, key, got: full.append(key) or prepare(self, key, got))
    verdicts = list(replayer.replay_many(order + order))
    assert {v.outcome for v in verdicts} == {"match"}
    assert full == []  # both corpora's frames were met in the first pass
    # A frame holds no index: one the cache let go is built again the full way.
    replayer.executor.cache = type(replayer.executor.cache)(pipe.store.corpora.stream, 2)
    assert {v.outcome for v in replayer.replay_many(order)} == {"match"}
    assert len(full) == 2
    client.close()
