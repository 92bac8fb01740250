"""The inline backend ranks on the event loop only what cannot hold it up: an index already
built, for the default engine, of a file unchanged since, and no larger than ON_LOOP_DOCS."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp import Client

from rookhaven.config import Settings
from rookhaven.models import RetrievalRequest
from rookhaven.server import build_server, inline
from rookhaven.server.inline import InlineBackend
from rookhaven.server.ports import Retrieval
from tests.mcp_support import ok, write_corpus

REQUEST = RetrievalRequest(query="crane faults", recall_budget=2)


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    return write_corpus(tmp_path)


@pytest.fixture
def backend(corpus: Path) -> Iterator[InlineBackend]:
    yield InlineBackend(Settings(corpus_path=corpus, engine="bm25@3"))


def test_nothing_answers_at_once_before_its_index_is_built(backend: InlineBackend) -> None:
    assert not backend.answers_at_once(None)
    backend.retrieve(REQUEST, None)
    assert backend.answers_at_once(None)


def test_only_the_default_engine_and_the_files_own_corpus_answer_at_once(
        backend: InlineBackend) -> None:
    backend.retrieve(REQUEST, None)
    digest = backend.retriever().corpus.digest
    assert backend.answers_at_once(backend.name) and backend.answers_at_once(digest)
    assert backend.answers_at_once(None, "bm25@3")
    assert not backend.answers_at_once(None, "bm25@2")  # built on first use: a thread's work
    assert not backend.answers_at_once(None, "no-such-engine")  # retrieve explains it
    assert not backend.answers_at_once("elsewhere")


def test_a_changed_file_or_a_corpus_over_the_limit_goes_to_a_thread(
        backend: InlineBackend, corpus: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    backend.retrieve(REQUEST, None)
    monkeypatch.setattr(inline, "ON_LOOP_DOCS", len(backend.retriever().corpus) - 1)
    assert not backend.answers_at_once(None)
    monkeypatch.undo()
    with corpus.open("a", encoding="utf-8") as out:  # re-indexed on the next call
        out.write(json.dumps({"id": "zz-new", "text": "a crane fault at night"}) + "\n")
    assert not backend.answers_at_once(None)
    assert backend.retrieve(REQUEST, None).result.audit.corpus_size == len(
        backend.retriever().corpus)
    assert backend.answers_at_once(None)


class _Threads(InlineBackend):
    """The inline backend, noting the thread each retrieval ran on."""

    def __init__(self, settings: Settings) -> None:
        super().__init__(settings)
        self.threads: list[int] = []

    def retrieve(self, request: RetrievalRequest, corpus: str | None,
                 engine: str | None = None, asked_by: str | None = None) -> Retrieval:
        self.threads.append(threading.get_ident())
        return super().retrieve(request, corpus, engine)


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_the_tool_ranks_on_the_event_loop_once_the_index_is_built(
        corpus: Path, anyio_backend: str) -> None:
    backend = _Threads(Settings(corpus_path=corpus))
    arguments = {"query": "crane faults", "recallBudget": 2}
    async with Client(build_server(Settings(corpus_path=corpus), backend=backend)) as client:
        first = ok(await client.call_tool("retrieve", arguments))
        second = ok(await client.call_tool("retrieve", arguments))
    loop_thread = threading.get_ident()  # the in-memory client runs the server here
    assert backend.threads[0] != loop_thread and backend.threads[1] == loop_thread
    assert {k: v for k, v in first.items() if k != "metadata"} == {
        k: v for k, v in second.items() if k != "metadata"}
