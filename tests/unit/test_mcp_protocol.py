"""What strict MCP clients check, in-process: advertised capabilities, closed argument
schemas, plain error texts, the JSON-RPC errors the spec names, logging levels, progress."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp_types import LoggingMessageNotificationParams

from rookhaven.config import Settings
from rookhaven.server import build_server
from tests.mcp_support import MemoryBackend, error_text, ok, write_corpus

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(corpus_path=write_corpus(tmp_path), max_query_len=200, max_recall=50)


@pytest.fixture
async def client(settings: Settings) -> AsyncIterator[Client]:
    async with Client(build_server(settings), mode="legacy") as connected:
        yield connected


async def test_capabilities_name_only_what_is_served(settings: Settings) -> None:
    server = build_server(settings)
    capabilities = server._lowlevel_server.get_capabilities()
    assert capabilities.tools is not None and capabilities.resources is not None
    assert capabilities.logging is not None
    assert capabilities.prompts is None


async def test_prompts_are_method_not_found(client: Client) -> None:
    with pytest.raises(MCPError) as refused:
        await client.list_prompts()
    assert refused.value.error.code == -32601
    with pytest.raises(MCPError) as refused:
        await client.get_prompt("anything")
    assert refused.value.error.code == -32601


async def test_input_schemas_carry_the_settings_limits_and_allow_nothing_else(
        client: Client) -> None:
    tools = {t.name: t for t in (await client.list_tools()).tools}
    for tool in tools.values():
        assert tool.input_schema["additionalProperties"] is False, tool.name
        text = json.dumps(tool.input_schema) + json.dumps(tool.output_schema)
        assert '"ge"' not in text and '"le"' not in text and "``" not in text, tool.name
        assert "\n " not in (tool.description or ""), tool.name
        assert "``" not in (tool.description or ""), tool.name
    args = tools["retrieve"].input_schema["properties"]
    assert args["query"]["maxLength"] == 200
    (budget, _) = args["recallBudget"]["anyOf"]
    assert budget == budget | {"type": "integer", "minimum": 1, "maximum": 50}


@pytest.mark.parametrize(("tool", "arguments", "named"), [
    ("retrieve", {"query": "crane", "bogus": 1}, "'bogus'"),
    ("retrieve", {"query": "crane", "recall_budget": 3}, "'recall_budget'"),
    ("list_corpora", {"x": 1, "y": 2}, "'x', 'y'"),
    ("get_run", {"runId": "verify-1", "wait": 1, "extra": True}, "'extra'"),
])
async def test_an_unknown_argument_is_a_tool_error_naming_it(
        client: Client, tool: str, arguments: dict[str, Any], named: str) -> None:
    text = error_text(await client.call_tool(tool, arguments))
    assert "unknown argument" in text and named in text


@pytest.mark.parametrize("arguments", [
    {}, {"query": 5}, {"query": "crane", "recallBudget": 0}, {"query": "crane", "seed": []},
    {"query": "crane", "decompose": "sometimes"},
])
async def test_argument_errors_carry_no_pydantic_text(
        client: Client, arguments: dict[str, Any]) -> None:
    text = error_text(await client.call_tool("retrieve", arguments))
    assert "pydantic" not in text and "http" not in text and "input_value" not in text
    assert "validation error for" not in text


@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")
async def test_log_messages_follow_the_level_the_client_set(
        settings: Settings) -> None:
    received: list[LoggingMessageNotificationParams] = []

    async def collect(params: LoggingMessageNotificationParams) -> None:
        received.append(params)

    server = build_server(settings, backend=MemoryBackend(settings))
    async with Client(server, mode="legacy", logging_callback=collect) as client:
        await client.set_logging_level("warning")
        ok(await client.call_tool("submit_retrieval", {"query": "crane"}))
        assert received == []
        await client.set_logging_level("info")
        job = ok(await client.call_tool("submit_retrieval", {"query": "tide"}))
    assert [(m.level, m.data["event"], m.data["job_id"]) for m in received] == [
        ("info", "job submitted", job["job_id"])]


async def test_a_call_with_a_progress_token_gets_progress(client: Client) -> None:
    seen: list[tuple[float, float | None, str | None]] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        seen.append((done, total, message))

    ok(await client.call_tool("retrieve", {"query": "crane"}, progress_callback=progress))
    assert [(d, t) for d, t, _ in seen] == [(0, 1), (1, 1)]
