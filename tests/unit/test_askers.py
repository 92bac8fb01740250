"""Who asked: a job's askers in its record, each token's open jobs counted and forgotten."""

from __future__ import annotations

import fakeredis

from rookhaven import Document, RetrievalRequest
from rookhaven.config import Settings
from rookhaven.pipeline import Pipeline
from rookhaven.pipeline.fake import RecordingDispatcher
from rookhaven.store import Store

DOCS = [Document(id=f"d{i}", text=f"crane {i} tide {i % 3} berth") for i in range(20)]


def _pipeline() -> Pipeline:
    settings = Settings(key_prefix="t")
    pipe = Pipeline(Store(fakeredis.FakeRedis(), "t"), RecordingDispatcher(), settings)
    pipe.add_corpus(DOCS, "port")
    return pipe


def _request(n: int) -> RetrievalRequest:
    return RetrievalRequest(query=f"crane tide {n}", recall_budget=3, seed=f"ask-{n}")


def test_a_job_names_each_token_that_asked_once_in_the_order_they_first_did() -> None:
    pipe = _pipeline()
    job = pipe.submit(_request(1), "port", asked_by="alpha")
    for name in ("beta", "alpha", "beta", "gamma"):
        assert pipe.submit(_request(1), "port", asked_by=name).job_id == job.job_id
    pipe.submit(_request(1), "port")  # the CLI: no token
    assert pipe.job(job.job_id).asked_by == ["alpha", "beta", "gamma"]
    assert pipe.job(pipe.submit(_request(2), "port").job_id).asked_by == []


def test_open_jobs_are_counted_and_the_closed_ones_forgotten_at_the_limit() -> None:
    pipe = _pipeline()
    askers = pipe.store.askers
    ids = [pipe.submit(_request(n), "port", asked_by="beta").job_id for n in range(4)]
    assert askers.open_jobs("beta", at_least=10) == 4
    assert askers.open_jobs("alpha", at_least=10) == 0
    pipe.store.jobs.fail(ids[0], "broken", permanent=True, max_attempts=3)
    # Below the limit the count is the cheap one; at it, closed jobs are forgotten.
    assert askers.open_jobs("beta", at_least=10) == 4
    assert askers.open_jobs("beta", at_least=4) == 3
    assert askers.open_jobs("beta", at_least=10) == 3


def test_a_run_names_each_token_that_started_or_resumed_it_once() -> None:
    reranks = _pipeline().store.reranks
    assert reranks.askers("rerank-1") == []
    for name in ("alpha", "beta", "alpha"):
        reranks.note_asker("rerank-1", name)
    assert reranks.askers("rerank-1") == ["alpha", "beta"]
