"""What a worker's heartbeat says it holds: Celery's reserved and running messages, and one
arriving from before its jobs are marked delivered until Celery has reserved it."""

from __future__ import annotations

import pytest
from celery.worker import state

from rookhaven.store.heartbeats import delivery
from workers import holdings
from workers.holdings import SETTLE, Holdings


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    clock = Clock()
    monkeypatch.setattr(holdings.time, "monotonic", clock)
    monkeypatch.setattr(state, "requests", {})
    return clock


def test_a_message_is_held_from_its_arrival_until_celery_forgets_it(clock: Clock) -> None:
    held = Holdings(grace=30)
    token = held.received("batch:a")
    assert token == delivery("batch:a") and held() == {token}  # its jobs being marked
    held.handed(token)
    state.requests["batch:a"] = object()  # reserved, then run
    clock.now += 60
    assert held() == {token}
    del state.requests["batch:a"]  # done, terminated or forgotten at a connection loss
    assert held() == set()


def test_a_message_celery_never_reserves_stops_being_held(clock: Clock) -> None:
    held = Holdings(grace=30)
    refused, slow = held.received("job:refused"), held.received("job:slow")
    held.handed(refused)  # the hook returned; Celery revoked or expired it
    clock.now += SETTLE / 2
    assert held() == {refused, slow}
    clock.now += SETTLE
    assert held() == {slow}  # its hook still waits on the store
    clock.now += 30
    assert held() == set()
