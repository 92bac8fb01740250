"""Reads sent ahead (store.ahead) on a real Redis: the ordinary replies, and a connection
left with unread replies never answers anyone else's command."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import redis

from rookhaven.errors import StoreUnavailableError
from rookhaven.store import Store
from rookhaven.store.ahead import Ahead


@pytest.fixture
def store(redis_url: str, key_prefix: str) -> Iterator[Store]:
    client = redis.Redis.from_url(redis_url)
    for i in range(300):
        client.set(f"{key_prefix}:a{i}", f"value {i}".encode() * (i % 7))
    made = Store(client, key_prefix)
    yield made
    client.close()


def names(prefix: str, count: int) -> list[str]:
    return [f"{prefix}:a{i}" for i in range(count)] + [f"{prefix}:absent"]


def test_replies_read_later_are_the_ordinary_replies(store: Store, key_prefix: str) -> None:
    client = store.client
    wanted = names(key_prefix, 300)
    before = client.mget(wanted)
    ahead = Ahead(client, [("MGET", *wanted), ("MGET", *wanted[:5])], lambda: [], "reading")
    # Written on another connection after the ask: the replies hold what was asked for.
    client.set(f"{key_prefix}:a1", b"changed after the ask")
    assert ahead.replies() == [before, before[:5]]
    assert client.get(f"{key_prefix}:a1") == b"changed after the ask"


def test_a_cancelled_read_leaves_no_reply_for_the_next_command(store: Store,
                                                                key_prefix: str) -> None:
    client = store.client
    for _ in range(20):  # more than the pool would hand out if connections leaked
        Ahead(client, [("MGET", *names(key_prefix, 300))], lambda: [], "reading").cancel()
        assert client.get(f"{key_prefix}:a3") == b"value 3" * 3
    assert client.connection_pool._created_connections <= 3  # type: ignore[attr-defined]


def test_a_failure_while_reading_takes_the_ordinary_path_and_its_message(
        store: Store, key_prefix: str, monkeypatch: pytest.MonkeyPatch) -> None:
    client = store.client
    ahead = Ahead(client, [("MGET", *names(key_prefix, 3))],
                  lambda: [client.mget(names(key_prefix, 3))], "reading")
    conn = ahead._conn
    conn._sock.close()  # the server's reply can no longer be read
    assert ahead.replies() == [client.mget(names(key_prefix, 3))]
    assert client.ping()

    def down() -> list[bytes | None]:
        raise StoreUnavailableError("Redis at ... failed while reading 3 results")
    ahead = Ahead(client, [("MGET", *names(key_prefix, 3))], down, "reading")
    ahead._conn._sock.close()
    with pytest.raises(StoreUnavailableError, match="reading 3 results"):
        ahead.replies()


def test_a_replay_stopped_midway_leaves_the_store_usable(store: Store, key_prefix: str) -> None:
    results = store.results
    client = store.client
    keys = [f"sha256:{i:064x}" for i in range(1200)]
    pending = results.read_ahead(keys[:600])
    assert pending.replies() == [[None] * 600]
    results.read_ahead(keys[600:]).cancel()
    assert results.get_many(keys[:2]) == [None, None]
    assert client.get(f"{key_prefix}:a1") == b"value 1"


def test_no_server_is_one_wait_and_one_line_naming_the_read() -> None:
    client = redis.Redis(port=1, socket_connect_timeout=0.2)
    with pytest.raises(StoreUnavailableError, match="check that the server is running"):
        Store(client, "nowhere").results.read_ahead(["sha256:" + "0" * 64]).replies()
    # Connecting for the ask already waited: the read says so, without waiting again.
    ahead = Ahead(client, [("MGET", "a")], lambda: ["read the ordinary way"], "reading a")
    with pytest.raises(StoreUnavailableError, match="while reading a: ConnectionError"):
        ahead.replies()


def test_a_health_check_falling_due_while_asking_never_takes_a_commands_reply(
        redis_url: str, key_prefix: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # Sent one by one, a check falling due after the first command would read that
    # command's reply as its PONG, and the replies would be read one off (a stall until the
    # socket's timeout, then the ordinary path). Sent in one write, the check comes first.
    client = redis.Redis.from_url(redis_url, health_check_interval=30, socket_timeout=5)
    sent = redis.connection.Connection.send_command

    def due_after_the_first(conn: Any, *args: Any, **kwargs: Any) -> None:
        sent(conn, *args, **kwargs)
        if args[0] == "MGET":
            conn.next_health_check = 0

    monkeypatch.setattr(redis.connection.Connection, "send_command", due_after_the_first)
    wanted = names(key_prefix, 3)
    ahead = Ahead(client, [("MGET", *wanted), ("MGET", *wanted[:1])],
                  lambda: [["read the ordinary way"]], "reading")
    assert ahead.replies() == [[None] * 4, [None]]
    client.close()
