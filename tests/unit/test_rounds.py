"""Rounds: several script calls in one round trip, and NOSCRIPT answered without re-running."""

from __future__ import annotations

import fakeredis
import pytest

from rookhaven.errors import IntegrityError, StoreUnavailableError
from rookhaven.store import Store
from rookhaven.store.results import Offered
from rookhaven.store.rounds import Item
from tests.results_support import AUDIT, framed

COUNT = "return redis.call('INCR', KEYS[1])"


def test_a_round_sends_its_calls_together_and_parses_each_answer() -> None:
    store = Store(fakeredis.FakeRedis(), "t")
    script = store.client.register_script(COUNT)
    round_ = store.round()
    replies = [round_.call(script, [f"t:{name}"], [], int) for name in ("a", "a", "b")]
    with pytest.raises(RuntimeError, match="before its Round was sent"):
        replies[0].get()
    round_.send("counting")
    assert [r.get() for r in replies] == [1, 2, 1]


def test_only_the_calls_redis_refused_with_noscript_are_sent_again() -> None:
    client = fakeredis.FakeRedis()
    store = Store(client, "t")
    known = client.register_script(COUNT)
    unknown = client.register_script(COUNT + " + 0")
    client.script_flush()
    client.script_load(known.script)
    round_ = store.round()
    first = round_.call(known, ["t:a"], [], int)
    second = round_.call(unknown, ["t:b"], [], int)
    round_.send("counting")
    assert (first.get(), second.get()) == (1, 1)
    assert (int(client.get("t:a")), int(client.get("t:b"))) == (1, 1)  # each ran once


def test_a_parsers_error_is_raised_by_its_own_reply_only() -> None:
    store = Store(fakeredis.FakeRedis(), "t")
    key = "sha256:" + "a" * 64
    store.results.put(key, "sha256:c", framed(b"[1]"), AUDIT)
    round_ = store.round()
    clash, fine = store.results.queue_put(round_, [
        Offered(key, "sha256:c", framed(b"[2]"), AUDIT),
        Offered("sha256:" + "b" * 64, "sha256:c", framed(b"[]"), AUDIT)])
    round_.send("storing two results")
    assert fine.get() == "stored"
    with pytest.raises(IntegrityError, match="different result bytes"):
        clash.get()


def test_a_redis_error_in_a_round_is_a_store_error_naming_what_was_done() -> None:
    store = Store(fakeredis.FakeRedis(), "t")
    broken = store.client.register_script("return redis.call('NOSUCHCOMMAND')")
    round_ = store.round()
    round_.call(broken, ["t:x"], [], int)
    with pytest.raises(StoreUnavailableError, match="failed while counting"):
        round_.send("counting")


def test_a_many_job_answer_is_parsed_once_however_many_of_its_items_are_read() -> None:
    store = Store(fakeredis.FakeRedis(), "t")
    script = store.client.register_script("return {1, 2, 3}")
    parsed: list[object] = []

    def parse(answer: object) -> list[int]:
        parsed.append(answer)
        return [int(x) for x in answer]  # type: ignore[attr-defined]

    round_ = store.round()
    whole = round_.call(script, ["t:x"], [], parse)
    items = [Item(whole, index, lambda value: value * 10) for index in range(3)]
    round_.send("answering")
    assert [item.get() for item in items] == [10, 20, 30] and whole.get() == [1, 2, 3]
    assert len(parsed) == 1


def test_calls_queued_together_run_as_one_transaction() -> None:
    client = fakeredis.FakeRedis()
    store = Store(client, "t")
    script = client.register_script(COUNT)
    round_ = store.round()
    before = round_.call(script, ["t:a"], [], int)
    with round_.together():
        wrote = round_.command("SET", ["t:b"], ["t:b", "x"], bool)
        counted = round_.call(script, ["t:b:n"], [], int)
    after = round_.call(script, ["t:a"], [], int)
    round_.send("counting")
    assert (before.get(), wrote.get(), counted.get(), after.get()) == (1, True, 1, 2)


def test_a_call_refused_at_queueing_aborts_its_transaction_and_nothing_in_it_runs() -> None:
    client = fakeredis.FakeRedis()
    store = Store(client, "t")
    round_ = store.round()
    with round_.together():
        round_.command("SET", ["t:b"], ["t:b", "x"], bool)
        round_.command("GET", ["t:b"], ["t:b", "extra"], bool)  # wrong arity
    with pytest.raises(StoreUnavailableError, match="failed while writing"):
        round_.send("writing")
    assert client.get("t:b") is None


def test_noscript_inside_a_transaction_runs_the_script_once_after_loading_it() -> None:
    client = fakeredis.FakeRedis()
    store = Store(client, "t")
    script = client.register_script(COUNT)
    client.script_flush()
    round_ = store.round()
    with round_.together():
        wrote = round_.command("INCR", ["t:b"], ["t:b"], int)
        counted = round_.call(script, ["t:a"], [], int)
    round_.send("counting")
    assert (wrote.get(), counted.get()) == (1, 1)
    assert (int(client.get("t:a")), int(client.get("t:b"))) == (1, 1)  # each ran once


def test_together_blocks_do_not_nest() -> None:
    round_ = Store(fakeredis.FakeRedis(), "t").round()
    with (round_.together(), pytest.raises(RuntimeError, match="inside another"),
          round_.together()):
        pass
