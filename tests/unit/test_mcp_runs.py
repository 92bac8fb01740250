"""The auditors' tools and the resources over the pipeline backend, on fakeredis: a
verification and a re-ranking started, followed to the end and read back; every failure."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp_types import TextResourceContents

from rookhaven import Document, canonical_bytes
from rookhaven.config import Settings
from rookhaven.models import RetrievalResult
from rookhaven.server import build_server, resources
from rookhaven.server.pipeline import PipelineBackend
from rookhaven.store import Store
from tests.mcp_support import error_text, fake_store, ok, pipeline_backend, write_corpus

pytestmark = pytest.mark.anyio

DOCS = [Document(id=f"d{i}", text=f"crane {i} berth {i % 4} tide {i % 3} delay")
        for i in range(30)]
QUERIES = ["crane delay", "berth tide", "tide delay crane", "berth 2", "crane 7"]
MISSING = "sha256:" + "0" * 64


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(corpus_path=write_corpus(tmp_path), redis_url="redis://unused")


@pytest.fixture
def store() -> Iterator[Store]:
    yield from fake_store()


@pytest.fixture
def backend(store: Store, settings: Settings) -> PipelineBackend:
    return pipeline_backend(store, settings, DOCS)


@pytest.fixture
async def client(settings: Settings, backend: PipelineBackend) -> AsyncIterator[Client]:
    async with Client(build_server(settings, backend=backend)) as connected:
        yield connected


async def stored_keys(client: Client) -> list[str]:
    keys = []
    for query in QUERIES:
        job = ok(await client.call_tool("submit_retrieval", {"query": query, "corpus": "port",
                                                             "recallBudget": 4}))
        keys.append(job["result_key"])
    return keys


async def finished(client: Client, run_id: str) -> dict[str, Any]:
    run = ok(await client.call_tool("get_run", {"runId": run_id, "wait": 30}))
    assert run["state"] == "done", run
    return run


def text_of(contents: Any) -> str:
    (only,) = contents.contents
    assert isinstance(only, TextResourceContents)
    return only.text


# --- verification -------------------------------------------------------------------------

async def test_a_verification_of_everything_is_started_followed_and_reported(
        client: Client) -> None:
    keys = await stored_keys(client)
    started = ok(await client.call_tool("start_verification", {"all": True}))
    assert started["run_id"].startswith("verify-") and started["kind"] == "verification"
    seen: list[float] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        seen.append(done)

    run = ok(await client.call_tool("get_run", {"runId": started["run_id"], "wait": 30},
                                    progress_callback=progress))
    assert run["state"] == "done" and seen and seen[-1] == len(keys)
    summary = run["verification"]
    assert summary["checked"] == len(keys) and summary["matched"] == len(keys)
    assert summary["alarms"] == 0 and summary["alarmed"] == []
    record = json.loads(text_of(await client.read_resource(run["report"])))
    # A run over everything names it by its selection and counts, not a list (ADR 0031).
    assert record["run_id"] == started["run_id"] and record["selection"]["all"]
    assert record["keys"] == [] and record["checked"] == len(keys)


async def test_a_verification_of_chosen_keys_finds_tampered_bytes(
        client: Client, store: Store) -> None:
    keys = await stored_keys(client)
    raw = store.results.get(keys[0])
    store._ctx.client.set(store._ctx.keys.result(keys[0]),  # an attacker with Redis access
                          raw.replace(b'"rank":1', b'"rank":9'))
    started = ok(await client.call_tool("start_verification", {"keys": keys[:2]}))
    summary = (await finished(client, started["run_id"]))["verification"]
    assert summary["checked"] == 2 and summary["mismatched"] == 1
    assert [a["key"] for a in summary["alarmed"]] == [keys[0]]


async def test_a_seeded_sample_over_one_corpus_records_its_seed(client: Client) -> None:
    await stored_keys(client)
    started = ok(await client.call_tool("start_verification", {
        "sample": 2, "seed": "audit-7", "corpus": "port", "stratify": "none"}))
    summary = (await finished(client, started["run_id"]))["verification"]
    assert summary["checked"] == 2 and summary["sample_seed"] == "audit-7"


async def test_a_finished_run_is_read_back_from_the_store_by_a_new_server(
        client: Client, settings: Settings, backend: PipelineBackend) -> None:
    await stored_keys(client)
    run_id = ok(await client.call_tool("start_verification", {"all": True}))["run_id"]
    first = await finished(client, run_id)
    async with Client(build_server(settings, backend=backend)) as other:
        again = ok(await other.call_tool("get_run", {"runId": run_id}))
    assert again["verification"] == first["verification"] and again["state"] == "done"


@pytest.mark.parametrize(("arguments", "says"), [
    ({"all": True, "sample": 3}, "give one of all, keys or sample"),
    ({"keys": [MISSING], "all": True}, "give one of all, keys or sample"),
    ({"corpus": "atlantis"}, "no corpus named 'atlantis'"),
    ({"sample": 0}, "sample"),
    ({"sample": 10**20}, "less than or equal to 1000000"),
    ({"corpus": "x" * 1_000_000}, "at most 200 characters"),
    ({"keys": ["sha256:feed"]}, "pattern"),
    ({"stratify": "weekly"}, "stratify"),
])
async def test_bad_verification_requests_are_tool_errors(
        client: Client, arguments: dict[str, Any], says: str) -> None:
    assert says in error_text(await client.call_tool("start_verification", arguments))


# --- re-ranking -----------------------------------------------------------------------------

async def test_a_rerank_against_another_engine_runs_here_without_workers(
        client: Client, store: Store) -> None:
    await stored_keys(client)
    started = ok(await client.call_tool("start_rerank", {"corpus": "port",
                                                         "toEngine": "bm25@1"}))
    assert started["run_id"].startswith("rerank-") and started["mode"] == "inline"
    run = await finished(client, started["run_id"])
    assert run["rerank"]["queries"] == len(QUERIES) and run["rerank"]["failed"] == 0
    assert run["done"] == run["total"] == len(QUERIES)
    rows = text_of(await client.read_resource(run["report"])).splitlines()
    assert [json.loads(r)["query"] for r in rows] == QUERIES
    assert all(json.loads(r)["new_key"] for r in rows)


async def test_a_rerank_with_a_live_worker_goes_through_the_pipeline(
        client: Client, store: Store) -> None:
    await stored_keys(client)
    store.heartbeats.beat("w1", 60)
    started = ok(await client.call_tool("start_rerank", {
        "toEngine": "bm25@1", "since": "2000-01-01T00:00:00Z", "limit": 2}))
    assert started["mode"] == "pipeline"
    assert (await finished(client, started["run_id"]))["rerank"]["queries"] == 2


@pytest.mark.parametrize(("arguments", "says"), [
    ({"corpus": "port"}, "nothing to compare against"),
    ({"toEngine": "bm25@7"}, "unknown engine 'bm25@7'"),
    ({"toCorpus": "atlantis"}, "no corpus named 'atlantis'"),
    ({"toEngine": "bm25@1", "since": "last tuesday"}, "since"),
    ({"toEngine": "bm25@1", "limit": 0}, "limit"),
    ({"toEngine": "bm25@2", "params": {"k1": "x"}}, "parameter k1 must be a finite number"),
    ({"toEngine": "bm25@2", "params": {"nonsense": 1}}, "no parameter(s) nonsense"),
    ({"toCorpus": "port", "params": {"k1": 1.5}}, "name the engine with toEngine"),
    ({"toEngine": "bm25@1", "since": "2030-01-01T00:00:00Z", "until": "2020-01-01T00:00:00Z"},
     "since is later than until"),
    ({"toEngine": "x" * 100_000}, "at most 64 characters"),
])
async def test_bad_rerank_requests_are_tool_errors(
        client: Client, arguments: dict[str, Any], says: str) -> None:
    assert says in error_text(await client.call_tool("start_rerank", arguments))


@pytest.mark.parametrize(("run_id", "says"), [
    ("verify-20200101T000000.000000Z", "no run 'verify-20200101T000000.000000Z'"),
    ("rerank-0123456789abcdef", "no run 'rerank-0123456789abcdef'"),
    ("job-1", "pattern"),
])
async def test_get_run_of_an_unknown_or_malformed_id_is_a_tool_error(
        client: Client, run_id: str, says: str) -> None:
    text = error_text(await client.call_tool("get_run", {"runId": run_id}))
    assert says in text and "rookhaven " not in text


async def test_run_tools_without_a_pipeline_say_how_to_configure_one(tmp_path: Path) -> None:
    async with Client(build_server(Settings(corpus_path=write_corpus(tmp_path)))) as inline:
        for tool, arguments in (("start_verification", {}), ("start_rerank", {"toEngine": "bm25"}),
                                ("get_run", {"runId": "rerank-0123456789abcdef"})):
            text = error_text(await inline.call_tool(tool, arguments))
            assert "needs the job pipeline" in text and "ROOKHAVEN_REDIS_URL" in text


# --- resources --------------------------------------------------------------------------------

async def test_templates_are_listed(client: Client) -> None:
    templates = {t.uri_template for t in (await client.list_resource_templates())
                 .resource_templates}
    assert templates == {"rookhaven://results/{key}", "rookhaven://audits/{key}",
                         "rookhaven://corpora/{ref}", "rookhaven://runs/{run_id}/report"}


async def test_stored_results_audits_and_corpora_are_listed_and_read(client: Client) -> None:
    keys = await stored_keys(client)
    listed = [r.uri for r in (await client.list_resources()).resources]
    corpora = [u for u in listed if u.startswith("rookhaven://corpora/sha256:")]
    assert len(corpora) == 2 and listed[:2] == corpora  # the stored one, then the file
    assert sorted(listed[2:]) == sorted([f"rookhaven://results/{k}" for k in keys]
                                        + [f"rookhaven://audits/{k}" for k in keys])
    got = ok(await client.call_tool("get_result", {"resultKey": keys[0]}))
    served = text_of(await client.read_resource(f"rookhaven://results/{keys[0]}"))
    assert served.encode() == canonical_bytes(RetrievalResult.model_validate(
        {"hits": got["hits"], "audit": got["audit"]}))
    audit = json.loads(text_of(await client.read_resource(f"rookhaven://audits/{keys[0]}")))
    assert audit == got["audit"]
    lines = text_of(await client.read_resource("rookhaven://corpora/port")).splitlines()
    assert len(lines) == len(DOCS) and json.loads(lines[0])["id"] == "d0"


async def test_the_listing_is_paged_behind_a_cursor(
        client: Client, monkeypatch: pytest.MonkeyPatch) -> None:
    keys = await stored_keys(client)
    monkeypatch.setattr(resources, "PAGE", 3)
    seen: list[str] = []
    cursor = None
    while True:
        page = await client.list_resources(cursor=cursor)
        assert len(page.resources) <= 3
        seen += [r.uri for r in page.resources]
        cursor = page.next_cursor
        if cursor is None:
            break
    assert len(seen) == len(set(seen)) == 2 + 2 * len(keys)


@pytest.mark.parametrize(("uri", "code", "says"), [
    (f"rookhaven://results/{MISSING}", -32602, "no result stored"),
    (f"rookhaven://audits/{MISSING}", -32602, "no audit stored"),
    ("rookhaven://results/sha256:feed", -32602, "is not a result key"),
    ("rookhaven://corpora/atlantis", -32602, "no corpus named 'atlantis'"),
    ("rookhaven://runs/rerank-0123456789abcdef/report", -32602, "no re-ranking run"),
    ("rookhaven://elsewhere/x", -32602, "Unknown resource"),
])
async def test_unknown_resources_are_the_invalid_params_error(
        client: Client, uri: str, code: int, says: str) -> None:
    with pytest.raises(MCPError) as refused:
        await client.read_resource(uri)
    assert refused.value.error.code == code and says in refused.value.error.message


@pytest.mark.parametrize("listing", ["list_resources", "list_resource_templates", "list_tools"])
async def test_an_invalid_cursor_is_refused(client: Client, listing: str) -> None:
    # Not the first page again: a client that sent a cursor of its own must hear it was bad.
    with pytest.raises(MCPError) as refused:
        await getattr(client, listing)(cursor="not-a-cursor")
    assert refused.value.error.code == -32602 and "cursor" in refused.value.error.message


async def test_an_unknown_resource_is_named_cut_with_what_there_is(client: Client) -> None:
    uri = "rookhaven://elsewhere/" + "x" * 5000
    with pytest.raises(MCPError) as refused:
        await client.read_resource(uri)
    error = refused.value.error
    assert error.code == -32602 and error.message.startswith("Unknown resource: ")
    assert len(error.message) < 400 and "x" * 100 not in error.message and error.data is None
    assert "rookhaven://results/{key}" in error.message
