"""Requests a second per token: a bucket each, so one client's burst cannot take the
server's time from another's.

Each token may send ROOKHAVEN_MCP_REQUESTS_PER_SECOND requests a second on average, and a
burst of twice that; past it that token alone gets 429 with Retry-After (the seconds until
its bucket holds a request again). A bucket is two numbers a token, so memory does not grow
with the requests.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

from starlette.types import ASGIApp, Receive, Scope, Send

from ..metrics import MCP_REFUSALS
from .tokens import grant_of


class RateLimits:
    """ASGI middleware (inside the token check): at most ``per_second`` requests a second a
    token, in bursts of up to twice that."""

    def __init__(self, app: ASGIApp, per_second: float,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.app, self._rate, self._clock = app, per_second, clock
        self._burst = max(1.0, 2 * per_second)
        self._buckets: dict[str, tuple[float, float]] = {}  # token -> (level, when)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        grant = grant_of(scope)
        if grant is None:
            await self.app(scope, receive, send)
            return
        now = self._clock()
        level, when = self._buckets.get(grant.name, (self._burst, now))
        level = min(self._burst, level + (now - when) * self._rate)
        if level < 1:
            self._buckets[grant.name] = (level, now)
            await too_many(send, grant.name, "requests", b"this token sends more than "
                           b"ROOKHAVEN_MCP_REQUESTS_PER_SECOND allows",
                           max(1, math.ceil((1 - level) / self._rate)))
            return
        self._buckets[grant.name] = (level - 1, now)
        await self.app(scope, receive, send)


async def too_many(send: Send, token: str, limit: str, why: bytes, wait: int) -> None:
    """A 429 saying ``why`` and when to retry (``wait`` s), for ``token`` past its ``limit``
    (this module's, server.sessions'), counted in ``rookhaven_mcp_refusals_total``."""
    MCP_REFUSALS.labels(token, limit).inc()
    body = (b'{"error":"too many requests","detail":"' + why
            + b': retry after the seconds Retry-After says"}')
    await send({"type": "http.response.start", "status": 429, "headers": [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"retry-after", str(wait).encode())]})
    await send({"type": "http.response.body", "body": body})
