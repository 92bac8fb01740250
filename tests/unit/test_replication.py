"""A WAIT's round trip: the replicas that confirmed and the primary's replication id."""

from __future__ import annotations

from typing import Any

import pytest
from redis.exceptions import ResponseError

from rookhaven.store.replication import Replication


class _Pipeline:
    """Answers the three commands of one confirmation as a server would."""

    def __init__(self, answers: list[Any]) -> None:
        self.answers = answers
        self.raise_on_error: bool | None = None

    def incr(self, _key: str) -> None: ...

    def wait(self, _replicas: int, _timeout: int) -> None: ...

    def info(self, _section: str) -> None: ...

    def execute(self, raise_on_error: bool = True) -> list[Any]:
        self.raise_on_error = raise_on_error
        return self.answers


class _Client:
    def __init__(self, answers: list[Any]) -> None:
        self.pipe = _Pipeline(answers)

    def pipeline(self, transaction: bool = True) -> _Pipeline:
        return self.pipe


def _replication() -> Replication:
    return Replication(ctx=None, min_replicas=1, timeout=0.2)  # type: ignore[arg-type]


def test_a_wait_gives_the_replicas_confirmed_and_the_primarys_id() -> None:
    client = _Client([1, 2, {"master_replid": "abc"}])
    assert _replication()._wait(client, "probe") == (2, b"abc")


def test_a_server_that_does_not_serve_info_confirms_without_an_id() -> None:
    client = _Client([1, 1, ResponseError("unknown command 'INFO'")])
    assert _replication()._wait(client, "probe") == (1, None)
    assert client.pipe.raise_on_error is False


def test_a_failed_probe_or_wait_is_raised_not_taken_for_an_answer() -> None:
    for answers in ([ResponseError("READONLY"), 1, {}], [1, ResponseError("NOREPLICAS"), {}]):
        with pytest.raises(ResponseError):
            _replication()._wait(_Client(answers), "probe")
