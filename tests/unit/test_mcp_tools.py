"""Every MCP tool, called in-process through the SDK's client: what succeeds and how each
failure reads to the caller."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from rookhaven.config import Settings
from rookhaven.core.canonical import canonical_bytes
from rookhaven.core.engine import Retriever, retrieve
from rookhaven.core.identity import result_key
from rookhaven.corpusfile import load_documents
from rookhaven.embedding import wordllama_files
from rookhaven.models import RetrievalRequest, RetrievalResult
from rookhaven.server import build_server
from tests.mcp_support import MemoryBackend, error_text, ok, write_corpus

pytestmark = pytest.mark.anyio

# A well-formed key nothing is stored under.
MISSING = "sha256:" + "0" * 64

ALL_TOOLS = {"retrieve", "submit_retrieval", "get_job", "get_result", "get_audit",
             "verify_result", "list_corpora", "start_verification", "start_rerank", "get_run",
             "search_tools"}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    return write_corpus(tmp_path)


@pytest.fixture
def settings(corpus: Path) -> Settings:
    return Settings(corpus_path=corpus, max_query_len=200, max_recall=50)


@pytest.fixture
async def inline(settings: Settings) -> AsyncIterator[Client]:
    async with Client(build_server(settings)) as client:
        yield client


@pytest.fixture
def memory(settings: Settings) -> Iterator[MemoryBackend]:
    yield MemoryBackend(settings)


@pytest.fixture
async def piped(settings: Settings, memory: MemoryBackend) -> AsyncIterator[Client]:
    async with Client(build_server(settings, backend=memory)) as client:
        yield client


# --- the tool list --------------------------------------------------------------------

async def test_every_tool_is_listed_with_an_input_and_an_output_schema(inline: Client) -> None:
    tools = {t.name: t for t in (await inline.list_tools()).tools}
    assert set(tools) == ALL_TOOLS
    for tool in tools.values():
        assert tool.output_schema is not None, tool.name
        assert tool.description
    retrieve_args = tools["retrieve"].input_schema
    assert retrieve_args["required"] == ["query"]
    assert {"query", "recallBudget", "seed", "corpus"} <= set(retrieve_args["properties"])
    # Injected state is never something a client is asked for.
    assert "state" not in retrieve_args["properties"]


async def test_every_tool_says_what_a_client_may_assume_of_it(inline: Client) -> None:
    tools = {t.name: t.annotations for t in (await inline.list_tools()).tools}
    assert all(a is not None and a.open_world_hint is False and a.destructive_hint is not True
               for a in tools.values()), tools
    reads = {name for name, a in tools.items() if a is not None and a.read_only_hint}
    assert reads == {"get_job", "get_result", "get_audit", "verify_result", "list_corpora",
                     "get_run"}
    # The same arguments give the same result under the same key: safe to retry.
    assert all(tools[name].idempotent_hint for name in ("retrieve", "submit_retrieval"))


# --- retrieve, inline --------------------------------------------------------------------

async def test_retrieve_inline_returns_the_same_bytes_as_the_library(
        inline: Client, corpus: Path) -> None:
    out = ok(await inline.call_tool("retrieve", {"query": "crane faults and tide windows",
                                                 "recallBudget": 3, "seed": "run-1"}))
    request = RetrievalRequest(query="crane faults and tide windows", recallBudget=3,
                               seed="run-1")
    documents = load_documents(corpus, max_docs=100)
    expected = retrieve(request, documents, Settings().engine)
    served = RetrievalResult.model_validate({"hits": out["hits"], "audit": out["audit"]})
    assert canonical_bytes(served) == canonical_bytes(expected)
    retriever = Retriever(documents, Settings().engine)
    assert out["result_key"] == result_key(request, retriever.corpus.digest, retriever.identity)


async def test_retrieve_takes_an_engine_by_name_at_version_and_refuses_an_unknown_one(
        inline: Client) -> None:
    args = {"query": "crane faults and tide windows", "seed": "e"}
    first = ok(await inline.call_tool("retrieve", {**args, "engine": "bm25@1"}))
    default = ok(await inline.call_tool("retrieve", {**args, "engine": "bm25"}))
    assert first["audit"]["engine"] == {"name": "bm25", "version": "1.1"}
    assert default["audit"]["engine"] == {"name": "bm25", "version": "1.6"}  # ADR 0040
    assert first["result_key"] != default["result_key"]
    assert "unknown engine 'bm25@7'" in error_text(
        await inline.call_tool("retrieve", {**args, "engine": "bm25@7"}))


@pytest.mark.skipif(wordllama_files() is None, reason="wordllama is not installed")
async def test_retrieve_ranks_with_the_hybrid_engine_and_gives_the_librarys_bytes(
        inline: Client, corpus: Path) -> None:
    args = {"query": "alert the crew on their phones", "recallBudget": 4, "seed": "h"}
    out = ok(await inline.call_tool("retrieve", {**args, "engine": "hybrid@1"}))
    assert out["audit"]["engine"] == {"name": "hybrid", "version": "1.1"}
    assert out["audit"]["fusion"]["semantic_weight"] in (0, 51)
    documents = load_documents(corpus, max_docs=100)
    expected = retrieve(RetrievalRequest(query=args["query"], recallBudget=4, seed="h"),
                        documents, "hybrid@1")
    served = RetrievalResult.model_validate({"hits": out["hits"], "audit": out["audit"]})
    assert canonical_bytes(served) == canonical_bytes(expected)


async def test_search_tools_finds_tools_with_their_definitions_beside_retrieves_result(
        tmp_path: Path) -> None:
    from rookhaven.toolcatalog import tool_corpus
    catalog = {"tools": [
        {"name": "sendPushNotification", "title": "Push",
         "description": "Send a push notification to a device",
         "inputSchema": {"type": "object", "properties": {"device_id": {"type": "string"}}}},
        {"name": "send_email", "description": "Send an email message",
         "inputSchema": {"type": "object", "properties": {"to": {"type": "string"}}}}]}
    corpus = tool_corpus(catalog, "catalog", max_docs=10)
    path = tmp_path / "tools.jsonl"
    path.write_bytes(b"".join(corpus.canonical_lines()))
    settings = Settings.from_mapping({"ROOKHAVEN_CORPUS_PATH": str(path)})
    async with Client(build_server(settings), raise_exceptions=True) as client:
        args = {"query": "push notification for a device", "recallBudget": 2}
        found = ok(await client.call_tool("search_tools", args))
        plain = ok(await client.call_tool("retrieve", args))
    assert found["result_key"] == plain["result_key"]
    assert found["hits"] == plain["hits"] and found["audit"] == plain["audit"]
    assert [t["name"] for t in found["tools"]] == [h["id"] for h in found["hits"]]
    first = found["tools"][0]
    assert first == {"name": "sendPushNotification", "title": "Push",
                     "description": "Send a push notification to a device",
                     "inputSchema": catalog["tools"][0]["inputSchema"]}


async def test_search_tools_over_a_corpus_that_is_no_tool_catalog_says_how_to_make_one(
        inline: Client) -> None:
    text = error_text(await inline.call_tool("search_tools", {"query": "crane faults"}))
    assert "is not a tool catalog: store one with `rookhaven corpus add --tools FILE`" in text


async def test_retrieve_says_it_ran_inline_and_keeps_that_outside_the_result(
        inline: Client) -> None:
    out = ok(await inline.call_tool("retrieve", {"query": "berth delays"}))
    assert out["metadata"]["mode"] == "inline"
    assert "ROOKHAVEN_REDIS_URL" in out["metadata"]["reason"]
    assert out["metadata"]["corpus"] == "port"
    assert "mode" not in canonical_bytes(RetrievalResult.model_validate(
        {"hits": out["hits"], "audit": out["audit"]})).decode()


async def test_retrieve_uses_the_configured_defaults(inline: Client, settings: Settings) -> None:
    audit = ok(await inline.call_tool("retrieve", {"query": "berth"}))["audit"]
    assert audit["recall_budget"] == settings.default_recall
    assert audit["seed"] == settings.default_seed


async def test_retrieve_accepts_the_corpus_by_name_or_digest(inline: Client) -> None:
    corpora = ok(await inline.call_tool("list_corpora", {}))["corpora"]
    by_name = ok(await inline.call_tool("retrieve", {"query": "tide", "corpus": "port"}))
    by_digest = ok(await inline.call_tool("retrieve", {"query": "tide",
                                                       "corpus": corpora[0]["digest"]}))
    assert by_name["hits"] == by_digest["hits"] and by_name["audit"] == by_digest["audit"]


@pytest.mark.parametrize("budget", ["2", 2.5, True, [2]])
async def test_retrieve_takes_a_budget_only_as_a_json_integer(inline: Client,
                                                              budget: Any) -> None:
    # The schema says integer: a string, a fraction or a boolean is the client's to fix, on
    # every transport, not a value the server guesses at.
    result = await inline.call_tool("retrieve", {"query": "berth", "recallBudget": budget})
    assert result.is_error
    text = result.content[0].text
    assert "recallBudget: " in text and ("integer" in text or "whole number" in text), text


async def test_an_integral_float_is_an_integer_as_json_schema_says(inline: Client) -> None:
    whole = ok(await inline.call_tool("retrieve", {"query": "berth", "recallBudget": 2}))
    point = ok(await inline.call_tool("retrieve", {"query": "berth", "recallBudget": 2.0}))
    assert point["hits"] == whole["hits"] and point["audit"] == whole["audit"]


@pytest.mark.parametrize(("arguments", "says"), [
    ({}, "query"),
    ({"query": 5}, "valid string"),
    ({"query": ""}, "query"),
    ({"query": "   "}, "query must contain some text"),
    ({"query": "x" * 201}, "query is 201 characters; the limit is 200"),
    ({"query": "berth", "recallBudget": 51}, "recall budget 51 is over the maximum 50"),
    ({"query": "berth", "recallBudget": 0}, "recallBudget"),
    ({"query": "berth", "recallBudget": True}, "not a boolean"),
    ({"query": "berth", "recallBudget": 2.5}, "recallBudget"),
    ({"query": "berth", "recallBudget": "many"}, "recallBudget"),
    ({"query": "berth", "seed": 7}, "seed"),
    ({"query": "berth", "corpus": "atlantis"}, "unknown corpus 'atlantis'"),
    ({"query": "berth", "seed": "s" * 257}, "seed is 257 characters; the limit is 256 "
     "(ROOKHAVEN_MAX_SEED_LEN)"),
    ({"query": "berth", "seed": "\ud800"}, "seed is not valid UTF-8"),
    ({"query": "berth", "corpus": "c" * 1_000_000}, "at most 200 characters"),
    ({"query": "berth", "engine": "e" * 1_000_000}, "at most 64 characters"),
])
async def test_bad_retrieve_arguments_are_tool_errors_that_say_what_is_wrong(
        inline: Client, arguments: dict[str, Any], says: str) -> None:
    assert says in error_text(await inline.call_tool("retrieve", arguments))


async def test_retrieve_without_a_corpus_says_how_to_configure_one() -> None:
    async with Client(build_server(Settings())) as client:
        text = error_text(await client.call_tool("retrieve", {"query": "berth"}))
    assert "ROOKHAVEN_CORPUS_PATH" in text


async def test_an_unreadable_corpus_file_is_reported_with_its_path(tmp_path: Path) -> None:
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"id": "a", "text": "ok"}\n{not json\n', encoding="utf-8")
    async with Client(build_server(Settings(corpus_path=broken))) as client:
        text = error_text(await client.call_tool("retrieve", {"query": "ok"}))
    assert "broken.jsonl: line 2" in text


async def test_a_corpus_file_over_a_limit_is_a_tool_error_naming_the_setting(
        tmp_path: Path) -> None:
    deep = tmp_path / "deep.jsonl"
    deep.write_text('{"id": "a", "metadata": ' + '{"k":' * 100 + "1" + "}" * 100 + "}\n",
                    encoding="utf-8")
    async with Client(build_server(Settings(corpus_path=deep))) as client:
        text = error_text(await client.call_tool("retrieve", {"query": "ok"}))
    assert "deep.jsonl: line 1: document 'a': 'metadata' has more than 32 levels" in text
    assert "ROOKHAVEN_MAX_METADATA_DEPTH" in text


async def test_an_edited_corpus_file_is_indexed_again(inline: Client, corpus: Path) -> None:
    before = ok(await inline.call_tool("list_corpora", {}))["corpora"][0]
    corpus.write_text('{"id": "only", "text": "crane"}\n', encoding="utf-8")
    after = ok(await inline.call_tool("list_corpora", {}))["corpora"][0]
    assert after["documents"] == 1 and after["digest"] != before["digest"]


# --- list_corpora -------------------------------------------------------------------------

async def test_list_corpora_names_the_file_and_says_there_is_no_pipeline(
        inline: Client, corpus: Path) -> None:
    out = ok(await inline.call_tool("list_corpora", {}))
    assert out["pipeline"] is False
    (only,) = out["corpora"]
    assert only["name"] == "port" and only["default"] is True
    assert only["documents"] == 5 and only["digest"].startswith("sha256:")
    assert only["source"] == str(corpus)


# --- job tools without a pipeline -----------------------------------------------------------

@pytest.mark.parametrize(("tool", "arguments"), [
    ("submit_retrieval", {"query": "berth"}),
    ("get_job", {"jobId": MISSING}),
    ("get_result", {"resultKey": MISSING}),
    ("get_audit", {"resultKey": MISSING}),
    ("verify_result", {"resultKey": MISSING}),
])
async def test_job_tools_without_a_pipeline_say_how_to_configure_one(
        inline: Client, tool: str, arguments: dict[str, Any]) -> None:
    text = error_text(await inline.call_tool(tool, arguments))
    assert f"{tool} needs the job pipeline" in text and "ROOKHAVEN_REDIS_URL" in text


# --- job tools over a pipeline backend --------------------------------------------------------

async def test_submit_then_get_job_result_and_audit(piped: Client) -> None:
    job = ok(await piped.call_tool("submit_retrieval", {"query": "crane faults",
                                                        "recallBudget": 2, "seed": "s"}))
    assert job["job_id"] and job["result_key"].startswith("sha256:")
    state = ok(await piped.call_tool("get_job", {"jobId": job["job_id"]}))
    assert state["state"] == "done" and state["result_key"] == job["result_key"]
    stored = ok(await piped.call_tool("get_result", {"resultKey": job["result_key"]}))
    audit = ok(await piped.call_tool("get_audit", {"resultKey": job["result_key"]}))
    assert stored["audit"] == audit["audit"]
    assert audit["audit"]["query"] == "crane faults" and audit["audit"]["seed"] == "s"
    inline = ok(await piped.call_tool("retrieve", {"query": "crane faults", "recallBudget": 2,
                                                   "seed": "s"}))
    assert inline["result_key"] == job["result_key"]
    assert inline["hits"] == stored["hits"] and inline["audit"] == stored["audit"]
    assert inline["metadata"]["mode"] == "pipeline"


async def test_verify_reports_a_match_for_an_untouched_result(piped: Client) -> None:
    job = ok(await piped.call_tool("submit_retrieval", {"query": "tide windows"}))
    out = ok(await piped.call_tool("verify_result", {"resultKey": job["result_key"]}))
    assert out["match"] is True and out["outcome"] == "match" and out["alarm"] is False


async def test_verify_reports_a_mismatch_for_tampered_bytes(
        piped: Client, memory: MemoryBackend) -> None:
    job = ok(await piped.call_tool("submit_retrieval", {"query": "tide windows"}))
    key = job["result_key"]
    memory.stored[key] = memory.stored[key].replace(b'"rank":1', b'"rank":9')
    out = ok(await piped.call_tool("verify_result", {"resultKey": key}))
    assert out["match"] is False and out["outcome"] == "mismatch" and out["alarm"] is True


async def test_list_corpora_over_a_pipeline_says_so(piped: Client) -> None:
    assert ok(await piped.call_tool("list_corpora", {}))["pipeline"] is True


@pytest.mark.parametrize(("tool", "arguments", "says"), [
    ("get_job", {"jobId": MISSING}, f"no job '{MISSING}'"),
    ("get_result", {"resultKey": MISSING}, f"no stored result under '{MISSING}'"),
    ("get_audit", {"resultKey": MISSING}, "no stored result"),
    ("verify_result", {"resultKey": MISSING}, "no stored result"),
    ("get_job", {}, "jobId"),
    ("get_result", {"resultKey": ""}, "resultKey"),
    ("submit_retrieval", {"query": "berth", "recallBudget": 51}, "over the maximum 50"),
    ("submit_retrieval", {"query": "berth", "corpus": "atlantis"}, "unknown corpus"),
])
async def test_unknown_jobs_and_keys_are_tool_errors(
        piped: Client, tool: str, arguments: dict[str, Any], says: str) -> None:
    assert says in error_text(await piped.call_tool(tool, arguments))


@pytest.mark.parametrize("tool", ["get_job", "get_result", "get_audit", "verify_result"])
@pytest.mark.parametrize("key", ["sha256:feed", "SHA256:" + "a" * 64, "sha256:" + "A" * 64,
                                 "sha256:" + "0" * 63, MISSING + "0", MISSING + "\n", "job-1"])
async def test_a_malformed_key_is_a_tool_error_saying_what_a_key_looks_like(
        piped: Client, memory: MemoryBackend, tool: str, key: str) -> None:
    name = "jobId" if tool == "get_job" else "resultKey"
    says = error_text(await piped.call_tool(tool, {name: key}))
    assert name in says and "pattern" in says and "no stored result" not in says


@pytest.mark.parametrize(("tool", "arguments"), [
    ("retrieve", {"query": "berth"}),
    ("submit_retrieval", {"query": "berth"}),
    ("get_job", {"jobId": MISSING}),
    ("get_result", {"resultKey": MISSING}),
    ("list_corpora", {}),
])
async def test_redis_down_is_a_tool_error_naming_the_store(
        piped: Client, memory: MemoryBackend, tool: str, arguments: dict[str, Any]) -> None:
    memory.down = True
    text = error_text(await piped.call_tool(tool, arguments))
    assert "store unavailable" in text and "Connection refused" in text


# --- the error channels ------------------------------------------------------------------------

async def test_a_bug_shows_no_internals_and_the_server_keeps_serving(
        settings: Settings, memory: MemoryBackend) -> None:
    def broken(*_: object) -> None:
        raise KeyError("internal detail")

    memory.job = broken  # type: ignore[method-assign, assignment]
    async with Client(build_server(settings, backend=memory)) as client:
        text = error_text(await client.call_tool("get_job", {"jobId": MISSING}))
        assert text == "Error executing tool get_job"
        ok(await client.call_tool("list_corpora", {}))


async def test_an_unknown_tool_is_the_json_rpc_invalid_params_error(inline: Client) -> None:
    with pytest.raises(MCPError) as refused:
        await inline.call_tool("rerank", {})
    assert refused.value.error.code == -32602
    assert "Unknown tool: 'rerank'" in refused.value.error.message
    assert "retrieve" in refused.value.error.message and "Traceback" not in str(refused.value)
    with pytest.raises(MCPError) as long_name:  # not echoed back in full
        await inline.call_tool("x" * 100_000, {})
    assert long_name.value.error.message.startswith(
        f"Unknown tool: '{'x' * 64}'...; this server's tools are ")
    assert len(long_name.value.error.message) < 500


@pytest.mark.parametrize(("tool", "arguments"), [
    ("retrieve", {"query": "crane berth, tide", "recallBudget": 4}),
    ("list_corpora", {}),
])
async def test_the_text_block_is_the_structured_content_as_compact_json(
        inline: Client, tool: str, arguments: dict[str, Any]) -> None:
    # A client without structured output reads the text: the same data, no indentation.
    result = await inline.call_tool(tool, arguments)
    (block,) = result.content
    assert block.type == "text"
    assert orjson.loads(block.text) == ok(result)
    assert block.text == orjson.dumps(ok(result)).decode()


async def test_a_result_that_cannot_be_converted_is_a_tool_error_that_says_nothing_inside(
        inline: Client, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(output: Any) -> Any:
        raise RuntimeError("internal detail /srv/secret")

    monkeypatch.setattr("rookhaven.server.arguments.tool_result", broken)
    result = await inline.call_tool("retrieve", {"query": "crane"})
    assert result.is_error and result.structured_content is None
    assert "secret" not in error_text(result) and "retrieve" in error_text(result)
