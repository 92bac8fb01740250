"""Sessions per token: no client of one token can crowd out another's.

The SDK caps the MCP sessions a server holds (past its cap every new client gets 503, for
as long as the idle ones last). Here each token may hold at most ROOKHAVEN_MCP_SESSIONS_PER_TOKEN
sessions: past that, that token alone gets 429 with Retry-After (when its least recently
used session will have idled out), and the SDK, told the same idle time
(ROOKHAVEN_MCP_SESSION_IDLE), closes idle sessions itself. A session is counted from the
response that opens it (its ``mcp-session-id``) until the client ends it (DELETE) or it has
had no request in flight for the idle time.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .rates import too_many
from .tokens import grant_of

HEADER = b"mcp-session-id"


@dataclass
class _Session:
    token: str
    used: float
    inflight: int = 0


class SessionCaps:
    """ASGI middleware (inside the token check): at most ``per_token`` open sessions a
    token."""

    def __init__(self, app: ASGIApp, path: str, per_token: int, idle: float,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.app, self._path, self._cap, self._idle, self._clock = (app, path, per_token,
                                                                     idle, clock)
        self._sessions: dict[bytes, _Session] = {}
        self._by_token: dict[str, set[bytes]] = {}
        # Requests under way that may open a session: counted, so concurrent opens cannot
        # all pass the cap before the first is answered.
        self._opening: dict[str, int] = {}

    def open_for(self, token: str) -> int:
        """How many sessions ``token`` holds now."""
        self._expire(token, self._clock())
        return len(self._by_token.get(token, ()))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        grant = grant_of(scope)
        if grant is None or scope["path"] != self._path:
            await self.app(scope, receive, send)
            return
        now = self._clock()
        self._expire(grant.name, now)
        sid = dict(scope["headers"]).get(HEADER)
        session = self._sessions.get(sid) if sid else None
        if session is not None and session.token == grant.name:
            session.used, session.inflight = now, session.inflight + 1
            try:
                await self.app(scope, receive, send)
            finally:
                session.inflight -= 1
                session.used = self._clock()
                if scope["method"] == "DELETE":
                    self._forget(sid)  # type: ignore[arg-type]
            return
        if sid is None and scope["method"] == "POST":
            token = grant.name
            held = self._by_token.get(token, set())
            if len(held) + self._opening.get(token, 0) >= self._cap:
                await self._refuse(send, token, held, now)
                return
            self._opening[token] = self._opening.get(token, 0) + 1
            settled = [False]
            try:
                await self.app(scope, receive, self._noting(send, token, settled))
            finally:
                if not settled[0]:
                    self._opening[token] -= 1
            return
        await self.app(scope, receive, send)

    def _noting(self, send: Send, token: str, settled: list[bool]) -> Send:
        """``send``, registering the session a response opens under ``token`` (and no
        longer counting it as opening: ``settled``)."""
        async def noted(message: Message) -> None:
            if message["type"] == "http.response.start" and not settled[0]:
                settled[0] = True
                self._opening[token] -= 1
                opened = dict(message.get("headers", [])).get(HEADER)
                if opened and message["status"] < 300:
                    self._sessions[opened] = _Session(token, self._clock())
                    self._by_token.setdefault(token, set()).add(opened)
            await send(message)
        return noted

    async def _refuse(self, send: Send, token: str, held: set[bytes], now: float) -> None:
        soonest = min((self._sessions[s].used for s in held), default=now) + self._idle
        why = (b"this token holds its " + str(self._cap).encode()
               + b" sessions (ROOKHAVEN_MCP_SESSIONS_PER_TOKEN): end one (DELETE) or wait")
        await too_many(send, token, "sessions", why, max(1, math.ceil(soonest - now)))

    def _expire(self, token: str, now: float) -> None:
        """Forget ``token``'s sessions the SDK has closed for idleness by now."""
        for sid in [s for s in self._by_token.get(token, ())
                    if self._sessions[s].inflight == 0
                    and self._sessions[s].used + self._idle <= now]:
            self._forget(sid)

    def _forget(self, sid: bytes) -> None:
        session = self._sessions.pop(sid, None)
        if session is not None:
            self._by_token.get(session.token, set()).discard(sid)
