"""The transport rules, without starting a server: which binds need a token, how an
unreadable stdio line is answered, and what the CLI refuses."""

from __future__ import annotations

import json
import time

import anyio
import pytest
from mcp.shared.message import SessionMessage
from mcp_types import jsonrpc_message_adapter
from pydantic import ValidationError

from rookhaven.cli.main import main
from rookhaven.config import Settings
from rookhaven.errors import ConfigError
from rookhaven.server.http import check_bind, is_loopback
from rookhaven.server.stdio import Answers, rejection, screen


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2", "localhost", "::1", "[::1]"])
def test_loopback_hosts_are_recognised(host: str) -> None:
    assert is_loopback(host)


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "10.0.0.5", "example.org", "",
                                  "127.0.0.1.nip.io"])
def test_anything_else_counts_as_public(host: str) -> None:
    assert not is_loopback(host)


def test_a_public_bind_needs_a_token_and_loopback_does_not() -> None:
    with pytest.raises(ConfigError, match=r"refusing to serve MCP on 0\.0\.0\.0"):
        check_bind("0.0.0.0", False)
    check_bind("0.0.0.0", True)
    check_bind("127.0.0.1", False)


def test_the_token_never_appears_in_the_settings_repr() -> None:
    settings = Settings.from_mapping({"ROOKHAVEN_MCP_TOKEN": "hunter2"})
    assert settings.mcp_token == "hunter2"
    assert "hunter2" not in repr(settings)


def _rejected(line: str) -> dict[str, object]:
    with pytest.raises(ValidationError) as caught:
        jsonrpc_message_adapter.validate_json(line, by_name=False)
    answer: dict[str, object] = json.loads(rejection(caught.value).model_dump_json())
    return answer


def test_a_line_that_is_not_json_is_a_parse_error_with_a_null_id() -> None:
    answer = _rejected("{nope")
    assert answer["id"] is None
    assert answer["error"] == {"code": -32700, "message": "Parse error: not valid JSON",
                               "data": None}


def test_a_json_line_that_is_not_a_message_is_an_invalid_request_keeping_its_id() -> None:
    answer = _rejected('{"jsonrpc": "2.0", "id": "a1", "method": 3}')
    assert answer["id"] == "a1"
    assert answer["error"]["code"] == -32600  # type: ignore[index]


def test_an_unusable_id_is_answered_with_null() -> None:
    assert _rejected('{"jsonrpc": "2.0", "id": [1], "method": 3}')["id"] is None


@pytest.mark.parametrize(("line", "request_id", "advice"), [
    ('{"jsonrpc":"2.0","id":7,"method":"tools/call","params":' + "[" * 50_000 + "]" * 50_000
     + "}", 7, "; nest less deeply"),
    ('{"jsonrpc":"2.0","method":"x","params":{"a":' + '[{"id":1},' * 3000 + "0"
     + "]" * 3000 + '},"id":"deep"}', "deep", "; nest less deeply"),
    ('{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"retrieve",'
     '"arguments":{"query":"\\ud800"}}}', 8, "lone surrogate"),
])
def test_json_the_sdk_cannot_parse_is_still_answered_under_its_id_saying_why(
        line: str, request_id: object, advice: str) -> None:
    answer = _rejected(line)
    assert answer["id"] == request_id
    assert answer["error"]["code"] == -32600  # type: ignore[index]
    message = answer["error"]["message"]  # type: ignore[index]
    assert advice in message
    # Each cause gets its own advice, not the other's.
    assert ("nest less deeply" in message) != ("valid Unicode" in message)


def test_host_and_port_without_http_are_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["mcp", "--port", "9000"]) == 2
    assert "--host and --port apply only with --http" in capsys.readouterr().err


def _message(raw: dict[str, object]) -> SessionMessage:
    return SessionMessage(jsonrpc_message_adapter.validate_python(raw))


@pytest.mark.parametrize("cancelled", [True, False])
def test_end_of_input_waits_for_answers_but_not_for_cancelled_requests(cancelled: bool) -> None:
    async def scenario() -> tuple[bool, list[SessionMessage | Exception]]:
        source_send, source = anyio.create_memory_object_stream[SessionMessage | Exception](10)
        sink, passed = anyio.create_memory_object_stream[SessionMessage | Exception](10)
        written, _ = anyio.create_memory_object_stream[SessionMessage](10)
        answers = Answers(written)
        await source_send.send(_message({"jsonrpc": "2.0", "id": 5, "method": "ping"}))
        if cancelled:
            await source_send.send(_message({"jsonrpc": "2.0", "method": "notifications/cancelled",
                                             "params": {"requestId": 5}}))
        await source_send.aclose()
        # Cancelled: a drain bound far beyond the outer one, which must not be reached.
        with anyio.move_on_after(10) as scope:
            await screen(source, sink, answers, drain_timeout=60 if cancelled else 0.3)
        return scope.cancelled_caught, [m async for m in passed]

    started = time.monotonic()
    timed_out, forwarded = anyio.run(scenario)
    waited = time.monotonic() - started
    assert not timed_out and len(forwarded) == (2 if cancelled else 1)
    # Unanswered, the drain waits out its bound; cancelled, it does not wait for it.
    assert cancelled or waited >= 0.3


@pytest.mark.parametrize("raw", [
    {"jsonrpc": "2.0", "id": 1.5, "method": "ping"},
    {"jsonrpc": "2.0", "id": None, "method": "tools/list"},
    {"jsonrpc": "2.0", "id": {"a": 1}, "method": "tools/call", "params": {"name": "x"}},
    {"jsonrpc": "2.0", "method": "ping"},
])
def test_a_request_without_an_id_it_may_have_is_answered_not_taken_for_a_notification(
        raw: dict[str, object]) -> None:
    # The SDK parses these as notifications (it drops the id): they would get no answer.
    line = json.dumps(raw)
    message = jsonrpc_message_adapter.validate_json(line, by_name=False)
    assert type(message).__name__ == "JSONRPCNotification"

    async def scenario() -> tuple[list[SessionMessage], list[SessionMessage | Exception]]:
        source_send, source = anyio.create_memory_object_stream[SessionMessage | Exception](10)
        sink, passed = anyio.create_memory_object_stream[SessionMessage | Exception](10)
        written_send, written = anyio.create_memory_object_stream[SessionMessage](10)
        await source_send.send(SessionMessage(message))
        await source_send.send(_message({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        await source_send.aclose()
        answers = Answers(written_send)
        await screen(source, sink, answers, drain_timeout=0.3)
        await answers.aclose()
        return [m async for m in written], [m async for m in passed]

    answered, passed = anyio.run(scenario)
    (error,) = [m.message for m in answered]
    dumped = error.model_dump(by_alias=True)
    assert dumped["id"] is None and dumped["error"]["code"] == -32600
    assert "needs an id that is a string or an integer" in dumped["error"]["message"]
    # A real notification still reaches the server.
    assert [m.message.method for m in passed] == ["notifications/initialized"]  # type: ignore[union-attr]
