"""Bulk re-ranking on fakeredis, inline: rows match a direct computation; runs resume."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import fakeredis
import orjson
import pytest

from rookhaven import Document, RetrievalRequest, Retriever, retrieve
from rookhaven.cli import rerank as rerank_cli
from rookhaven.cli.main import build_parser
from rookhaven.config import Settings
from rookhaven.core.compare import compare_rankings
from rookhaven.errors import InputError
from rookhaven.pipeline import Executor, Pipeline, RecordingDispatcher
from rookhaven.rerank import Reranker, RerankSpec, summarize
from rookhaven.rerank import runner as runner_module
from rookhaven.rerank.runner import hit_ids
from rookhaven.store import Store
from tests.rerank_support import NEW, OLD, REQUESTS, history


@pytest.fixture
def pipeline() -> Iterator[Pipeline]:
    yield from history("r")


@pytest.fixture
def rerank(pipeline: Pipeline, monkeypatch: pytest.MonkeyPatch) -> Callable[..., int]:
    """``rookhaven rerank --inline ARGS...`` on the fixture's store: its exit status."""
    monkeypatch.setattr(rerank_cli.Store, "from_settings", lambda _: pipeline.store)

    def run(*argv: str) -> int:
        args = build_parser("rerank").parse_args(["rerank", "--inline", *argv])
        return int(args.run(args, pipeline.settings))
    return run


def spec(pipe: Pipeline, chunk: int = 4) -> RerankSpec:
    return RerankSpec(source="audits", corpus=pipe.store.corpora.resolve("port@1"),
                      target_corpus=pipe.store.corpora.resolve("port@2"), chunk=chunk)


def test_every_row_matches_a_direct_comparison_of_old_and_new_rankings(
        pipeline: Pipeline) -> None:
    reranker = Reranker(pipeline)
    rows = reranker.run(reranker.start(spec(pipeline)))
    assert len(rows) == len(REQUESTS)
    by_query = {(r.query, r.seed): r for r in rows}
    for request in REQUESTS:
        old = [h.id for h in retrieve(request, OLD, "tfcosine").hits]
        new = [h.id for h in retrieve(request, NEW, "tfcosine").hits]
        row = by_query[(request.query, request.seed)]
        assert row.status == "ok"
        assert row.change == compare_rankings(old, new, request.recall_budget).as_dict()
    summary = summarize("x", rows)
    assert summary.compared == len(REQUESTS) and summary.failed == 0
    assert summary.changed == sum(not r.change["unchanged"] for r in rows if r.change)
    assert summary.changed > 0 and summary.unchanged > 0


def test_the_new_results_are_stored_like_any_other_job(pipeline: Pipeline) -> None:
    reranker = Reranker(pipeline)
    rows = reranker.run(reranker.start(spec(pipeline)))
    for row in rows:
        assert row.new_key is not None
        assert pipeline.store.jobs.get(row.new_key).state == "done"
        assert pipeline.store.results.exists(row.new_key)


def test_a_stopped_run_resumes_without_redoing_finished_chunks(
        pipeline: Pipeline, monkeypatch: pytest.MonkeyPatch) -> None:
    reranker = Reranker(pipeline)
    run_id = reranker.start(spec(pipeline, chunk=5))
    real_finish = reranker._finish_chunk
    calls: list[int] = []
    fail_third = [True]

    def stopping(items: list, offset: int, jobs):  # type: ignore[no-untyped-def]
        calls.append(offset)
        if fail_third[0] and len(calls) == 3:
            raise ConnectionError("redis went away in the third chunk")
        return real_finish(items, offset, jobs)

    monkeypatch.setattr(reranker, "_finish_chunk", stopping)
    with pytest.raises(ConnectionError):
        reranker.run(run_id)
    calls.clear()
    fail_third[0] = False
    rows = reranker.run(run_id)
    assert calls == [10, 15, 20]
    assert [r.index for r in rows] == list(range(len(REQUESTS)))
    assert Reranker(pipeline).start(spec(pipeline, chunk=5)) == run_id


def test_requests_from_a_file_need_their_baseline_corpus(pipeline: Pipeline) -> None:
    file_spec = RerankSpec(source="file", requests=[{"query": "crane"}],
                           target_corpus=pipeline.store.corpora.resolve("port@2"))
    with pytest.raises(InputError, match="--baseline"):
        Reranker(pipeline).start(file_spec)
    with_baseline = file_spec.model_copy(update={"baseline": "port@1"})
    reranker = Reranker(pipeline)
    (row,) = reranker.run(reranker.start(with_baseline))
    old = [h.id for h in retrieve(RetrievalRequest(query="crane"), OLD, "tfcosine").hits]
    new = [h.id for h in retrieve(RetrievalRequest(query="crane"), NEW, "tfcosine").hits]
    assert row.change == compare_rankings(old, new, 10).as_dict()


def test_a_request_files_lines_are_checked_and_name_the_engine_they_first_ran_with(
        rerank: Callable[..., int], tmp_path: Path) -> None:
    lines = tmp_path / "requests.jsonl"
    lines.write_text('{"query": "crane 2 and tide", "engine": "bm25@2", "recallBudget": 4}\n'
                     '\n{"query": "berth delay"}\n', encoding="utf-8")
    out = tmp_path / "report.jsonl"
    assert rerank("--requests", str(lines), "--baseline", "port@1",
                  "--to-engine", "bm25@3", "--out", str(out)) == 0
    first, second = (orjson.loads(line) for line in out.read_bytes().splitlines())
    # The first line ran under the engine it names, the second under the setting's.
    request = RetrievalRequest(query="crane 2 and tide", recallBudget=4)
    old = [h.id for h in retrieve(request, OLD, "bm25@2").hits]
    new = [h.id for h in retrieve(request, OLD, "bm25@3").hits]
    assert first["change"] == compare_rankings(old, new, 4).as_dict()
    plain = RetrievalRequest(query="berth delay")
    old = [h.id for h in retrieve(plain, OLD, "tfcosine@1").hits]
    new = [h.id for h in retrieve(plain, OLD, "bm25@3").hits]
    assert second["change"] == compare_rankings(old, new, 10).as_dict()
    # A bad line stops the run before anything starts, naming the line.
    lines.write_text('{"query": "crane"}\n{"query": "tide", "engine": "bm25@9"}\n',
                     encoding="utf-8")
    with pytest.raises(InputError, match=r"requests.jsonl: line 2: unknown engine 'bm25@9'"):
        rerank("--requests", str(lines), "--baseline", "port@1", "--to-engine", "bm25@3")
    lines.write_text('{"query": "crane", "colour": "red"}\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"line 1: unknown field 'colour'"):
        rerank("--requests", str(lines), "--baseline", "port@1", "--to-engine", "bm25@3")


def test_a_resumed_run_writes_the_report_file_it_started_with_unless_given_another(
        pipeline: Pipeline, rerank: Callable[..., int], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    first = tmp_path / "first.jsonl"
    store = pipeline.store
    assert rerank("--corpus", store.corpora.resolve("port@1"),
                  "--to-corpus", store.corpora.resolve("port@2"), "--out", str(first)) == 0
    run_id = capsys.readouterr().err.split("rerank: run ", 1)[1].split()[0]
    report = first.read_bytes()
    first.unlink()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert rerank("--resume", run_id) == 0
    assert first.read_bytes() == report and list(elsewhere.iterdir()) == []
    second = tmp_path / "second.jsonl"
    assert rerank("--resume", run_id, "--out", str(second)) == 0
    assert second.read_bytes() == report
    second.unlink()
    assert rerank("--resume", run_id) == 0 and second.read_bytes() == report
    assert store.reranks.out(run_id) == str(second)


def test_resuming_an_unknown_run_records_nothing(
        pipeline: Pipeline, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(rerank_cli.Store, "from_settings", lambda _: pipeline.store)
    args = build_parser("rerank").parse_args(
        ["rerank", "--inline", "--resume", "nope", "--out", str(tmp_path / "x.jsonl")])
    with pytest.raises(InputError, match="no re-ranking run 'nope'"):
        args.run(args, pipeline.settings)
    assert pipeline.store.reranks.out("nope") is None


def test_what_a_run_made_for_its_comparison_is_not_history_until_someone_asks_for_it(
        pipeline: Pipeline) -> None:
    reranker = Reranker(pipeline)
    everything = RerankSpec(source="audits", provider="bm25@2", chunk=10)
    first = reranker.run(reranker.start(everything))
    assert len(first) == len(REQUESTS)
    # The bm25@2 results the first run stored are not queries a second run re-ranks.
    again = everything.model_copy(update={"until": pipeline.store.now()})
    assert len(reranker.run(reranker.start(again))) == len(REQUESTS)
    # A result someone submits is history, whoever computed it first.
    asked = REQUESTS[0]
    pipeline.submit_many([asked], "port@1", "bm25@2")
    later = everything.model_copy(update={"until": pipeline.store.now() + 1})
    assert len(reranker.run(reranker.start(later))) == len(REQUESTS) + 1


def test_an_unknown_target_engine_or_a_parameter_it_cannot_take_records_no_run(
        pipeline: Pipeline, rerank: Callable[..., int], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    for argv, message in ((["--to-engine", "bm25@99"], "unknown engine 'bm25@99'"),
                          (["--to-engine", "bm25@2", "--param", "k1=abc"],
                           "parameter k1 must be a finite number, got 'abc'"),
                          (["--to-corpus", "port@2", "--param", "k1=1"],
                           "name the engine with --to-engine or --provider")):
        with pytest.raises(InputError, match=message):
            rerank(*argv)
    assert list(tmp_path.iterdir()) == []
    assert not list(pipeline.store.client.scan_iter(match="r:rerank:*"))


def testhit_ids_are_read_from_the_hits_alone_whatever_the_ids_hold() -> None:
    docs = [Document(id=f'd,"hits":[{i}]}}', text=f"crane berth {i} tide") for i in range(30)]
    retriever = Retriever(docs, "bm25")
    for query in ("crane", "tide and berth 3", "nothing matches"):
        result, _ = retriever.result_bytes(RetrievalRequest(query=query, recallBudget=5))
        assert hit_ids(result) == [hit["id"] for hit in orjson.loads(result)["hits"]]
    assert hit_ids(None) is None


@pytest.mark.parametrize("ending", ["every result stored", "one job failed"])
def test_a_chunk_is_watched_by_counting_its_results_and_its_states_read_seldom(
        monkeypatch: pytest.MonkeyPatch, ending: str) -> None:
    client = fakeredis.FakeRedis()
    settings = Settings(engine="tfcosine@1", batch_size=5)
    pipe = Pipeline(Store(client, "w"), RecordingDispatcher(), settings)  # no one runs them
    pipe.add_corpus(OLD, "port")
    refs = pipe.submit_many(REQUESTS[:4], "port")
    ids = [r.job_id for r in refs]
    reads: list[int] = []
    states_many = pipe.store.jobs.states_many
    monkeypatch.setattr(pipe.store.jobs, "states_many",
                        lambda job_ids: reads.append(len(job_ids)) or states_many(job_ids))
    sleeps: list[float] = []

    def sleep(seconds: float) -> None:  # the workers' progress, a look at a time
        sleeps.append(seconds)
        if len(sleeps) == 3:
            if ending == "one job failed":
                pipe.store.jobs.fail(ids[0], "InputError: no", permanent=True, max_attempts=3)
                Executor(pipe.store, settings).run(ids[1:], "w")
            else:
                Executor(pipe.store, settings).run(ids, "w")

    monkeypatch.setattr(runner_module.time, "sleep", sleep)
    Reranker(pipe)._wait(refs)
    if ending == "every result stored":
        # The first look reads the states; the look after the results appear reads them
        # again and finds every job done.
        assert reads == [4, 4] and len(sleeps) == 3
    else:
        # The failed job never has a result: the tenth look reads the states and ends.
        assert reads == [4, 4] and len(sleeps) == runner_module.STATES_EVERY
    client.close()
