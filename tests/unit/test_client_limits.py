"""Limits per token: past its sessions or its rate a token alone gets 429; a session ended
or idle stops counting, and requests in flight keep a session counted."""

from __future__ import annotations

from typing import Any

import anyio

from rookhaven.metrics import PROCESS
from rookhaven.server.rates import RateLimits
from rookhaven.server.sessions import SessionCaps
from rookhaven.server.tokens import Grant


def refusals(token: str, limit: str) -> float:
    """``rookhaven_mcp_refusals_total`` for ``token`` and ``limit`` in this process."""
    return PROCESS.get_sample_value("rookhaven_mcp_refusals_total",
                                    {"token": token, "limit": limit}) or 0.0


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_token_past_its_cap_gets_429_and_no_other_token_does() -> None:
    clock, opened = Clock(), [0]

    async def sdk(scope: dict[str, Any], receive: Any, send: Any) -> None:
        headers = []
        if not dict(scope["headers"]).get(b"mcp-session-id"):
            opened[0] += 1
            headers.append((b"mcp-session-id", f"s{opened[0]}".encode()))
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": b"{}"})

    caps = SessionCaps(sdk, "/mcp", per_token=2, idle=60, clock=clock)

    async def call(token: str, method: str = "POST", sid: bytes | None = None,
                   ) -> tuple[int, dict[bytes, bytes]]:
        sent: list[dict[str, Any]] = []

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)

        headers = [(b"mcp-session-id", sid)] if sid else []
        await caps({"type": "http", "path": "/mcp", "method": method, "headers": headers,
                    "state": {"grant": Grant(token, frozenset({"read"}))}}, None, send)
        return sent[0]["status"], dict(sent[0]["headers"])

    async def main() -> None:
        before = refusals("a", "sessions")
        assert (await call("a"))[0] == 200 and (await call("a"))[0] == 200
        status, headers = await call("a")
        assert status == 429 and headers[b"retry-after"] == b"60"
        assert refusals("a", "sessions") == before + 1  # the operator sees who was refused
        assert (await call("b"))[0] == 200  # another token is not crowded out
        assert (await call("a", "DELETE", b"s1"))[0] == 200  # ended: no longer counted
        assert caps.open_for("a") == 1 and (await call("a"))[0] == 200
        clock.now = 30
        assert (await call("a", "POST", b"s2"))[0] == 200  # used at 30: idles out at 90
        clock.now = 61
        assert caps.open_for("a") == 1  # s4 (opened at 0) idled out; s2 was used since
        clock.now = 91
        assert caps.open_for("a") == 0 and caps.open_for("b") == 0

    anyio.run(main)


def test_a_token_past_its_rate_gets_429_until_its_bucket_refills_and_others_go_on() -> None:
    clock, served = Clock(), []

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        served.append(scope["state"]["grant"].name)
        await send({"type": "http.response.start", "status": 200, "headers": []})

    limits = RateLimits(app, per_second=5, clock=clock)

    async def call(token: str) -> tuple[int, dict[bytes, bytes]]:
        sent: list[dict[str, Any]] = []

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)

        await limits({"type": "http", "path": "/mcp", "method": "POST", "headers": [],
                      "state": {"grant": Grant(token, frozenset({"read"}))}}, None, send)
        return sent[0]["status"], dict(sent[0]["headers"])

    async def main() -> None:
        before = refusals("a", "requests")
        assert [(await call("a"))[0] for _ in range(10)] == [200] * 10  # a burst of 2x
        status, headers = await call("a")
        assert status == 429 and headers[b"retry-after"] == b"1"
        assert refusals("a", "requests") == before + 1
        assert (await call("b"))[0] == 200
        clock.now = 0.2  # one request's worth back (5 a second)
        assert (await call("a"))[0] == 200 and (await call("a"))[0] == 429
        clock.now = 100.0  # refilled to the burst, not beyond
        assert [(await call("a"))[0] for _ in range(11)] == [200] * 10 + [429]

    anyio.run(main)
