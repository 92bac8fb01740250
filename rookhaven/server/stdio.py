"""Serving over stdio, with two repairs to the SDK's loop for line-oriented clients.

1. The SDK drops a line that is not a JSON-RPC message without a word; here it is answered
   with a JSON-RPC error (-32700 parse error, -32600 invalid request, carrying the id when
   one can be read, even from JSON the SDK's parser refuses), as JSON-RPC 2.0 asks, and
   serving goes on. A request whose id is not a string or an integer (or missing), which
   the SDK takes for a notification, is answered -32600 too.
2. At end of input the SDK cancels requests still running, so ``printf '...' | rookhaven mcp``
   would lose the answer to a slow ``tools/call``. Here end of input first waits (bounded)
   until every request read has been answered.
3. The SDK decodes input with replacement characters, so a line that is not UTF-8 would be
   served as text the client never sent (and stored, and logged). Here such a line is
   answered with an error naming the byte, under its id where one can be read. A blank line
   is skipped (the SDK answered each with a parse error).
"""

from __future__ import annotations

import json
import sys
import typing
from collections import Counter
from collections.abc import AsyncIterable, AsyncIterator
from typing import Any

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server
from mcp.shared._stream_protocols import ReadStream, WriteStream
from mcp.shared.message import SessionMessage
from mcp_types import (
    INVALID_REQUEST,
    PARSE_ERROR,
    ClientRequest,
    ErrorData,
    JSONRPCError,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResponse,
)
from pydantic import ValidationError

RequestId = str | int

# The methods a client calls as requests (the SDK's ClientRequest union). A message naming
# one without an id a request may have (none, null, 1.5, true, an object) was meant as a
# request: the SDK reads it as a notification and would answer nothing, and the client would
# wait for its own timeout.
REQUEST_METHODS = frozenset(method for kind in typing.get_args(ClientRequest)
                            for method in typing.get_args(kind.model_fields["method"].annotation))
NO_ID = ("Invalid Request: a request needs an id that is a string or an integer (a "
         "notification's method starts with notifications/)")

NOT_A_MESSAGE = ("Invalid Request: not a JSON-RPC 2.0 request, notification or response "
                 "(check jsonrpc, id, method, and that params is an object)")

# Longest wait at end of input for answers still being computed (s).
DRAIN_TIMEOUT = 120.0


def request_id(value: Any) -> RequestId | None:
    """``value`` if it can be a request's id (a string or an integer), else None."""
    return value if isinstance(value, str | int) and not isinstance(value, bool) else None


def _scanned_id(line: str) -> RequestId | None:
    """The top-level ``id`` of the object on ``line``, read without parsing the rest (which
    may nest deeper than any parser goes)."""
    decoder = json.JSONDecoder()
    at, depth, key = line.find("{"), 0, False
    if at < 0 or line[:at].strip():
        return None
    while at < len(line):
        char = line[at]
        if char == '"':
            try:
                text, at = decoder.raw_decode(line, at)
            except ValueError:
                return None
            rest = line[at:].lstrip()
            if depth == 1 and key and text == "id" and rest.startswith(":"):
                try:
                    return request_id(decoder.raw_decode(rest[1:].lstrip())[0])
                except ValueError:
                    return None
            continue
        if char in "{[":
            depth += 1
        elif char in "}]":
            depth -= 1
        key = depth == 1 and char in "{,"
        at += 1
    return None


def readable_id(line: str) -> RequestId | None:
    """The request id on a line the SDK's parser refused, where it can be read: JSON that
    nests too deep for it, or holds a \\u escape no Unicode text has, still names its request."""
    try:
        found = json.loads(line)
    except RecursionError:
        return _scanned_id(line)
    except ValueError:
        return None
    return request_id(found.get("id")) if isinstance(found, dict) else None


def unreadable(problem: str) -> ErrorData:
    """The error for JSON the SDK's parser refused (``problem``, its words) in a request
    whose id could still be read, with what to change."""
    if "recursion" in problem.lower():
        advice = "nest less deeply"
    elif "escape" in problem.lower() or "surrogate" in problem.lower():
        # The parser's words ("unexpected end of hex escape") name a symptom, not the cause.
        problem = ("a \\u escape of a lone surrogate (\\ud800-\\udfff) names no character: "
                   + problem)
        advice = "send text as valid Unicode"
    else:
        advice = "send valid JSON"
    return ErrorData(code=INVALID_REQUEST, message=f"Invalid Request: this server cannot read "
                                                   f"it ({problem}); {advice}")


def rejection(exc: Exception) -> JSONRPCError:
    """The JSON-RPC error for an input line the transport could not read as a message."""
    errors = exc.errors() if isinstance(exc, ValidationError) else []
    invalid = [e for e in errors if e["type"] == "json_invalid"]
    if not errors or invalid:
        line = invalid[0].get("input") if invalid else None
        request = readable_id(line) if isinstance(line, str) else None
        if request is None:
            return JSONRPCError(jsonrpc="2.0", id=None, error=ErrorData(
                code=PARSE_ERROR, message="Parse error: not valid JSON"))
        problem = str(invalid[0]["msg"]).removeprefix("Invalid JSON: ")
        return JSONRPCError(jsonrpc="2.0", id=request, error=unreadable(problem))
    ids = [e["input"].get("id") for e in errors if isinstance(e.get("input"), dict)]
    found = next((i for i in map(request_id, ids) if i is not None), None)
    return JSONRPCError(jsonrpc="2.0", id=found, error=ErrorData(code=INVALID_REQUEST,
                                                                  message=NOT_A_MESSAGE))


class Utf8Lines:
    """Input lines as text for the SDK's reader, which turns each into exactly one message
    or error. A line that is not UTF-8 is passed on decoded with replacement characters (so
    that count holds) and its fault noted by line number, for ``screen`` to answer."""

    def __init__(self, lines: AsyncIterable[bytes]) -> None:
        self._lines = lines
        self.faults: dict[int, tuple[str, str]] = {}  # line number: (text, fault)

    def __aiter__(self) -> AsyncIterator[str]:
        return self._decoded()

    async def _decoded(self) -> AsyncIterator[str]:
        number = 0
        async for raw in self._lines:
            if not raw.strip():  # a blank line is no message: nothing to answer
                continue
            number += 1
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                text = raw.decode("utf-8", "replace")
                self.faults[number] = (text, f"byte 0x{raw[exc.start]:02x} at offset "
                                             f"{exc.start}")
            yield text


def not_utf8(line: str, fault: str) -> JSONRPCError:
    """The answer to an input line that is not UTF-8 (``fault`` says where), under the
    request's id where the rest of the line still names one."""
    request = readable_id(line)
    message = f"the line is not UTF-8 ({fault}); MCP messages are UTF-8 JSON"
    if request is None:
        return JSONRPCError(jsonrpc="2.0", id=None, error=ErrorData(
            code=PARSE_ERROR, message=f"Parse error: {message}"))
    return JSONRPCError(jsonrpc="2.0", id=request, error=ErrorData(
        code=INVALID_REQUEST, message=f"Invalid Request: {message}"))


class Answers:
    """The write side, noting which requests read so far still await an answer."""

    def __init__(self, stream: WriteStream[SessionMessage]) -> None:
        self._stream = stream
        # Counted: a client that reuses an id in flight still gets each answer waited for.
        self._pending: Counter[RequestId] = Counter()
        self._idle = anyio.Event()
        self._idle.set()

    def expect(self, request_id: RequestId) -> None:
        self._pending[request_id] += 1
        if self._idle.is_set():
            self._idle = anyio.Event()

    def _answered(self, request_id: object) -> None:
        if not isinstance(request_id, str | int) or request_id not in self._pending:
            return
        self._pending[request_id] -= 1
        if self._pending[request_id] <= 0:
            del self._pending[request_id]
        if not self._pending:
            self._idle.set()

    def forget(self, request_id: object) -> None:
        """Stop waiting for a request the client cancelled (it gets no answer)."""
        self._answered(request_id)

    async def idle(self) -> None:
        """Return once every expected request has been answered."""
        await self._idle.wait()

    async def send(self, item: SessionMessage, /) -> None:
        await self._stream.send(item)
        message = item.message
        if isinstance(message, JSONRPCResponse | JSONRPCError):
            self._answered(message.id)

    async def aclose(self) -> None:
        await self._stream.aclose()

    async def __aenter__(self) -> Answers:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


def _refusal(item: SessionMessage | Exception,
             fault: tuple[str, str] | None) -> JSONRPCError | None:
    """The error answering an input item instead of serving it, if it gets one."""
    if fault is not None:
        return not_utf8(*fault)
    if isinstance(item, Exception):
        return rejection(item)
    message = item.message
    if isinstance(message, JSONRPCNotification) and message.method in REQUEST_METHODS:
        return JSONRPCError(jsonrpc="2.0", id=None,
                            error=ErrorData(code=INVALID_REQUEST, message=NO_ID))
    return None


async def screen(source: ReadStream[SessionMessage | Exception],
                 sink: anyio.abc.ObjectSendStream[SessionMessage | Exception],
                 answers: Answers, drain_timeout: float, lines: Utf8Lines | None = None) -> None:
    """Pass messages to the server, answer unreadable lines, and drain at end of input.
    ``lines``: the input the SDK's reader reads, one item a line, with its faults."""
    number = 0
    async with sink:
        async for item in source:
            number += 1
            fault = lines.faults.pop(number, None) if lines is not None else None
            refusal = _refusal(item, fault)
            if refusal is not None:
                try:
                    await answers.send(SessionMessage(refusal))
                except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                    return
                continue
            assert not isinstance(item, Exception)
            message = item.message
            if isinstance(message, JSONRPCRequest):
                answers.expect(message.id)
            elif (isinstance(message, JSONRPCNotification)
                  and message.method == "notifications/cancelled" and message.params):
                answers.forget(message.params.get("requestId"))
            await sink.send(item)
        with anyio.move_on_after(drain_timeout):
            await answers.idle()


async def serve_stdio(server: MCPServer[Any], drain_timeout: float = DRAIN_TIMEOUT) -> None:
    """Serve ``server`` on this process's stdin/stdout until end of input."""
    # The low-level server is what the SDK's own run_stdio_async drives; MCPServer has no
    # public way to hand it other streams.
    lowlevel = server._lowlevel_server
    # Our own stdin (the SDK's decodes with replacement); the SDK still claims stdout.
    lines = Utf8Lines(anyio.wrap_file(sys.stdin.buffer))
    async with stdio_server(stdin=typing.cast(Any, lines)) as (stdin, stdout):
        inbox_send, inbox = anyio.create_memory_object_stream[SessionMessage | Exception](0)
        answers = Answers(stdout)
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(screen, stdin, inbox_send, answers, drain_timeout, lines)
            await lowlevel.run(inbox, answers, lowlevel.create_initialization_options())
            tasks.cancel_scope.cancel()
