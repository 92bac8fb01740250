"""The reasons given to the SDK's bare -32602 answers (server/protocol.py)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR, INVALID_PARAMS
from pydantic import BaseModel, ValidationError

from rookhaven.server.protocol import explain_invalid_params, invalid_params


class Params(BaseModel):
    a: int
    b: str
    c: list[int]
    d: bool


def _validation_error(value: dict[str, Any]) -> ValidationError:
    try:
        Params.model_validate(value)
    except ValidationError as exc:
        return exc
    raise AssertionError("expected a validation error")


def test_a_message_names_three_fields_counts_the_rest_and_never_quotes_the_input() -> None:
    error = invalid_params("x/y", _validation_error({"a": "secret-value", "c": "z"})).error
    assert error.code == INVALID_PARAMS and error.data == ""
    assert error.message == ("Invalid params for x/y: a: Input should be a valid integer, unable "
                             "to parse string as an integer; b: Field required; c: Input should "
                             "be a valid list (and 1 more)")
    assert "secret-value" not in error.message


class Capabilities(BaseModel):
    experimental: dict[str, dict[str, Any]]


def test_a_key_the_client_chose_is_not_quoted_back() -> None:
    try:
        Capabilities.model_validate({"experimental": {"sk-SECRET-7f3a9c": 5, "ok_name": 6,
                                                      "k" * 100_000: 7}})
    except ValidationError as exc:
        message = invalid_params("initialize", exc).error.message
    assert message == ("Invalid params for initialize: experimental.<key>: Input should be a "
                       "valid dictionary; experimental.ok_name: Input should be a valid "
                       "dictionary; experimental.<key>: Input should be a valid dictionary")


def _ctx(method: str, initialized: bool) -> Any:
    return SimpleNamespace(method=method, session=SimpleNamespace(
        client_params=object() if initialized else None))


async def _raising(exc: BaseException) -> Any:
    async def call_next(ctx: Any) -> Any:
        raise exc
    return call_next


@pytest.mark.anyio
async def test_the_handshake_gate_says_so_and_other_errors_pass_unchanged() -> None:
    gate = MCPError(code=INVALID_PARAMS, message="Invalid request parameters", data="")
    with pytest.raises(MCPError, match="tools/list before the session is initialized"):
        await explain_invalid_params(_ctx("tools/list", False), await _raising(gate))
    with pytest.raises(MCPError) as same:  # after initialize: not the gate's
        await explain_invalid_params(_ctx("tools/list", True), await _raising(gate))
    assert same.value is gate
    other = MCPError(code=INTERNAL_ERROR, message="boom")
    with pytest.raises(MCPError) as passed:
        await explain_invalid_params(_ctx("tools/call", False), await _raising(other))
    assert passed.value is other

    async def answer(ctx: Any) -> Any:
        return {"ok": True}
    assert await explain_invalid_params(_ctx("tools/call", True), answer) == {"ok": True}
