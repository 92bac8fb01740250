"""Streamable HTTP: the SDK's ASGI app behind a bearer-token check, served by uvicorn.

Binding anything but loopback exposes retrieval (and the store) to the network, so it is
refused unless ROOKHAVEN_MCP_TOKEN is set. When a token is set it is required on every
HTTP request, on loopback too. Prometheus metrics are served at /metrics behind the same
token (scrape with ``authorization: {credentials: <token>}``), and each run's page
(``rookhaven report``) at /runs/RUN_ID.html.
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import logging
import re
from typing import Any

import anyio
import h11
import uvicorn
from mcp.server.mcpserver import MCPServer
from mcp_types import INVALID_REQUEST, PARSE_ERROR, ErrorData, JSONRPCError
from prometheus_client import CollectorRegistry, make_asgi_app
from starlette.types import ASGIApp, Receive, Scope, Send
from uvicorn.protocols.http.h11_impl import H11Protocol

from ..config import Settings
from ..errors import ConfigError, NotFoundError, StoreUnavailableError
from ..metrics import registry_for
from ..reports import page_for
from ..reports.written import made_now
from ..store import Store
from .rates import RateLimits
from .sessions import SessionCaps
from .stdio import NO_ID, NOT_A_MESSAGE, REQUEST_METHODS, readable_id, request_id, unreadable
from .tokens import Grant, Keyring
from .tools import State

log = logging.getLogger(__name__)

PATH = "/mcp"
METRICS_PATH = "/metrics"
# A run's page (rookhaven report): /runs/RUN_ID.html.
RUN_PAGE = re.compile(r"/runs/([A-Za-z0-9._:-]{1,128})\.html")
# A page needs nothing from anywhere: no script, no fetch, its style and pictures inline.
PAGE_POLICY = b"default-src 'none'; style-src 'unsafe-inline'; img-src data:"


def is_loopback(host: str) -> bool:
    """True for localhost and 127.0.0.0/8, ::1; a name other than localhost counts as remote."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


class BearerToken:
    """ASGI middleware: HTTP requests without ``Authorization: Bearer <token>`` naming a
    token of the keyring get 401; the token's grant (name, scopes) goes with the request
    (``scope["state"]["grant"]``) for the tools to check."""

    def __init__(self, app: ASGIApp, token: str | Keyring) -> None:
        self.app = app
        self._keys = token if isinstance(token, Keyring) else Keyring(token, None)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            grant = self._granted(scope)
            if grant is None:
                await _unauthorized(send)
                return
            scope.setdefault("state", {})["grant"] = grant
        await self.app(scope, receive, send)

    def _granted(self, scope: Scope) -> Grant | None:
        given = dict(scope["headers"]).get(b"authorization", b"")
        # The scheme's name is case-insensitive (RFC 9110, 11.1): "bearer" is "Bearer".
        scheme, _, credentials = given.partition(b" ")
        # Hashed and compared in constant time with every token: response timing does not
        # leak how much of a guess was right.
        grant = self._keys.grant(credentials.strip(b" "))
        return grant if scheme.lower() == b"bearer" else None


async def _unauthorized(send: Send) -> None:
    body = b'{"error":"unauthorized","detail":"send Authorization: Bearer <ROOKHAVEN_MCP_TOKEN>"}'
    await send({"type": "http.response.start", "status": 401, "headers": [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"www-authenticate", b'Bearer realm="rookhaven"'),
    ]})
    await send({"type": "http.response.body", "body": body})


def check_bind(host: str, guarded: bool) -> None:
    """Refuse a non-loopback bind that no token guards, before anything listens."""
    if not guarded and not is_loopback(host):
        raise ConfigError(f"refusing to serve MCP on {host}, which is not loopback, without a "
                          "token: set ROOKHAVEN_MCP_TOKEN or ROOKHAVEN_MCP_TOKENS_FILE (clients "
                          "then send Authorization: Bearer <token>) or bind 127.0.0.1")


def with_pages(app: ASGIApp, store: Store) -> ASGIApp:
    """``app`` with each run's page (``rookhaven report``) at /runs/RUN_ID.html: read-only,
    and told by its Content-Security-Policy to fetch nothing, as it needs nothing."""

    async def route(scope: Scope, receive: Receive, send: Send) -> None:
        found = RUN_PAGE.fullmatch(scope["path"]) if scope["type"] == "http" else None
        if found is None:
            await app(scope, receive, send)
            return
        if scope["method"] not in ("GET", "HEAD"):
            await _plain(send, 405, b"a run's page is read-only: GET it\n",
                         [(b"allow", b"GET, HEAD")])
            return
        try:
            page = await anyio.to_thread.run_sync(
                lambda: page_for(store, found[1], made_now(store.now())))
        except NotFoundError as exc:
            await _plain(send, 404, f"{exc}\n".encode())
            return
        except StoreUnavailableError as exc:
            await _plain(send, 503, f"{exc}\n".encode())
            return
        body = page.encode()
        await send({"type": "http.response.start", "status": 200, "headers": [
            (b"content-type", b"text/html; charset=utf-8"),
            (b"content-length", str(len(body)).encode()),
            (b"content-security-policy", PAGE_POLICY)]})
        await send({"type": "http.response.body",
                    "body": body if scope["method"] == "GET" else b""})
    return route


async def _plain(send: Send, status: int, body: bytes,
                 extra: list[tuple[bytes, bytes]] | None = None) -> None:
    await send({"type": "http.response.start", "status": status, "headers": [
        (b"content-type", b"text/plain; charset=utf-8"),
        (b"content-length", str(len(body)).encode()), *(extra or [])]})
    await send({"type": "http.response.body", "body": body})


def with_metrics(app: ASGIApp, registry: CollectorRegistry) -> ASGIApp:
    """``app`` with Prometheus metrics answered at /metrics."""
    metrics = make_asgi_app(registry)

    async def route(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"] == METRICS_PATH:
            await metrics(scope, receive, send)
        else:
            await app(scope, receive, send)
    return route


class ParseErrorIds:
    """ASGI middleware: a POST the SDK would answer badly is answered as over stdio.

    - JSON the SDK's parser refuses (nesting too deep for it, a \\u escape no Unicode text
      has) is answered under the request's own id where it can be read
      (``stdio.readable_id``), instead of with id null; any other 400 with id null (a
      missing session header) keeps its own error and gets the id too.
    - A batch (a JSON array), which MCP no longer has, and a message whose id is neither a
      string nor an integer (the SDK would read it as a notification and answer nothing)
      are refused with -32600 before the SDK sees them; a message the SDK cannot validate
      gets stdio's plain -32600, not pydantic's account of the union it tried.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        chunks: list[Any] = []
        while True:
            message = await receive()
            chunks.append(message)
            if message["type"] != "http.request" or not message.get("more_body"):
                break
        body = b"".join(m.get("body", b"") for m in chunks)
        refused = _refused(body)
        if refused is not None:
            await _json_rpc_error(send, refused)
            return
        replay = iter(chunks)

        async def replayed() -> Any:
            return next(replay, None) or await receive()

        held: list[Any] = []

        async def answer(message: Any) -> None:
            if held or (message["type"] == "http.response.start" and message["status"] == 400):
                held.append(message)
                if message["type"] == "http.response.body" and not message.get("more_body"):
                    for each in _with_id(held, body):
                        await send(each)
                return
            await send(message)

        await self.app(scope, replayed, answer)


def _refused(body: bytes) -> JSONRPCError | None:
    """The error for a body the SDK would mishandle (see ParseErrorIds), or None."""
    try:
        found = json.loads(body)
    except (ValueError, RecursionError, UnicodeDecodeError):
        return None  # the SDK's parser answers it, and _with_id gives it its id
    if isinstance(found, list):
        return JSONRPCError(jsonrpc="2.0", id=None, error=ErrorData(
            code=INVALID_REQUEST, message="Invalid Request: a batch (JSON array) is not an MCP "
            "message; send each request in a POST of its own"))
    if not isinstance(found, dict) or request_id(found.get("id")) is not None:
        return None
    if ("id" in found and "method" in found) or found.get("method") in REQUEST_METHODS:
        return JSONRPCError(jsonrpc="2.0", id=None, error=ErrorData(
            code=INVALID_REQUEST, message=NO_ID))
    return None


def _error_bytes(error: JSONRPCError) -> bytes:
    """``error`` as JSON, its id written even when null: JSON-RPC 2.0 requires the member
    (null when the request's id could not be read), and exclude_none would drop it."""
    data = error.model_dump(mode="json", by_alias=True, exclude_none=True)
    return json.dumps({"jsonrpc": data.pop("jsonrpc"), "id": error.id, **data},
                      separators=(",", ":")).encode()


async def _json_rpc_error(send: Send, error: JSONRPCError) -> None:
    body = _error_bytes(error)
    await send({"type": "http.response.start", "status": 400, "headers": [
        (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


def _with_id(messages: list[Any], request: bytes) -> list[Any]:
    """A held 400 answer, its JSON-RPC error given the request's id when it had none (and
    pydantic's account of a message it could not validate replaced by stdio's words)."""
    start, *rest = messages
    body = b"".join(m.get("body", b"") for m in rest)
    try:
        error = json.loads(body)
        found = readable_id(request.decode("utf-8", "surrogatepass"))
    except (ValueError, UnicodeDecodeError):
        return messages
    if not isinstance(error, dict) or error.get("id") is not None:
        return messages
    said: dict[str, Any] = error["error"] if isinstance(error.get("error"), dict) else {}
    message = str(said.get("message", ""))
    if said.get("code") == PARSE_ERROR and found is not None:
        data = unreadable(message.removeprefix("Parse error: "))
    elif message.startswith("Validation error:"):
        data = ErrorData(code=INVALID_REQUEST, message=NOT_A_MESSAGE)
    elif found is not None:
        code = said.get("code")
        data = ErrorData(code=code if isinstance(code, int) else INVALID_REQUEST, message=message)
    else:
        return messages
    fixed = _error_bytes(JSONRPCError(jsonrpc="2.0", id=found, error=data))
    headers = [(k, v) for k, v in start["headers"] if k.lower() != b"content-length"]
    headers.append((b"content-length", str(len(fixed)).encode()))
    return [{**start, "headers": headers}, {"type": "http.response.body", "body": fixed}]


def http_app(server: MCPServer[State], host: str, token: str | Keyring | None,
             registry: CollectorRegistry | None = None, store: Store | None = None,
             sessions_per_token: int = 32, session_idle: float = 120.0,
             requests_per_second: float = 50.0) -> ASGIApp:
    """The server's streamable HTTP app at /mcp (and /metrics when given a registry, run
    pages at /runs/RUN_ID.html when given a store), behind the token check when there is
    one, each token holding at most ``sessions_per_token`` sessions, each closed after
    ``session_idle`` s without a request, and sending at most ``requests_per_second``."""
    keys = token if isinstance(token, Keyring) else Keyring(token, None)
    check_bind(host, keys.required)
    app: ASGIApp = ParseErrorIds(server.streamable_http_app(
        streamable_http_path=PATH, host=host, session_idle_timeout=session_idle))
    app = SessionCaps(app, PATH, sessions_per_token, session_idle)
    if registry is not None:
        app = with_metrics(app, registry)
    if store is not None:
        app = with_pages(app, store)
    app = RateLimits(app, requests_per_second)
    return BearerToken(app, keys) if keys.required else app


class ReadTimeoutH11(H11Protocol):
    """uvicorn's h11 protocol with a read deadline: a request not wholly received within
    ``read_timeout`` seconds of its first byte (or of the connection) is dropped.

    uvicorn times out only idle keep-alive connections, so a client that sends half a
    request and stops would otherwise hold a connection (and its memory) for ever.
    """

    read_timeout = 30.0

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._deadline: asyncio.TimerHandle | None = None
        self._arm()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.conn.their_state in (h11.IDLE, h11.SEND_BODY):  # a request in progress
            self._arm()
        else:  # received whole (or the connection is ending): the app takes its time
            self._disarm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _arm(self) -> None:
        if self._deadline is None:
            self._deadline = self.loop.call_later(self.read_timeout, self._expired)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _expired(self) -> None:
        self._deadline = None
        if not self.transport.is_closing():
            log.info("closed a connection whose request was not received within "
                     "ROOKHAVEN_MCP_READ_TIMEOUT", extra={"seconds": self.read_timeout})
            self.transport.close()


def serve_http(server: MCPServer[State], settings: Settings) -> None:
    """Serve until interrupted on settings.mcp_host:mcp_port; logs go through our handlers."""
    store = Store.from_settings(settings) if settings.redis_url else None
    keys = Keyring(settings.mcp_token, settings.mcp_tokens_file)
    app = http_app(server, settings.mcp_host, keys, registry_for(store), store,
                   settings.mcp_sessions_per_token, settings.mcp_session_idle,
                   settings.mcp_requests_per_second)
    log.info("serving MCP over streamable HTTP", extra={
        "url": f"http://{settings.mcp_host}:{settings.mcp_port}{PATH}",
        "token_required": keys.required, "tokens": [t["name"] for t in keys.listed()],
    })
    # log_config=None: keep uvicorn off its own handlers so its lines are JSON on stderr too.
    protocol = type("ReadTimeoutH11", (ReadTimeoutH11,),
                    {"read_timeout": settings.mcp_read_timeout})
    config = uvicorn.Config(app, host=settings.mcp_host, port=settings.mcp_port,
                            log_config=None, log_level=settings.log_level, http=protocol,
                            timeout_keep_alive=5)
    uvicorn.Server(config).run()
