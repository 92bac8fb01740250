"""Log shards: the layout a store records, keys that a cluster can shard, checkpoint sets."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import fakeredis
import pytest
from redis.commands.core import Script
from redis.crc import key_slot

from rookhaven import Document, RetrievalRequest
from rookhaven.config import Settings
from rookhaven.errors import ConfigError, NoteFormatError
from rookhaven.pipeline import Executor, Pipeline, RecordingDispatcher
from rookhaven.store import Store
from rookhaven.store.keys import shard_tags
from rookhaven.store.rounds import Round
from rookhaven.transparency import checkpoints
from rookhaven.transparency.checkpointset import SignedTrees, Tree
from rookhaven.transparency.note import generate_key

PRIVATE, VERIFIER = generate_key("rookhaven.test/shards", bytes(range(32)))
DOCS = [Document(id=f"d{i}", text=f"crane {i} berth {i % 3}") for i in range(12)]


@pytest.fixture
def client() -> Iterator[fakeredis.FakeRedis]:
    client = fakeredis.FakeRedis()
    yield client
    client.close()


def test_a_new_store_records_its_shards_and_every_process_then_reads_them(
        client: fakeredis.FakeRedis) -> None:
    assert not Store(client, "flat").keys.sharded  # no setting: the flat layout of old
    made = Store(client, "s", log_shards=4).keys
    assert made.sharded and len(made.shards) == 4
    assert Store(client, "s").keys == made  # a process without the setting finds the same
    with pytest.raises(ConfigError, match=r"created with 4 log shard.*ROOKHAVEN_LOG_SHARDS=8"):
        _ = Store(client, "s", log_shards=8).keys


def test_a_store_with_data_and_no_layout_record_stays_flat(client: fakeredis.FakeRedis) -> None:
    client.xadd("old:ledger", {"job": "j", "event": "queued"})  # written before layouts
    with pytest.raises(ConfigError, match="created with the flat layout"):
        _ = Store(client, "old", log_shards=4).keys
    assert not Store(client, "old").keys.sharded


def test_a_layout_record_that_is_not_one_is_refused(client: fakeredis.FakeRedis) -> None:
    client.set("bad:layout", b'{"version":1,"tags":["a{b"]}')
    with pytest.raises(ConfigError, match="does not hold a layout"):
        _ = Store(client, "bad").keys


def test_each_shard_tag_lands_in_its_own_equal_range_of_slots() -> None:
    for shards in (1, 3, 64, 1024):
        tags = shard_tags(shards)
        slots = [key_slot(("{" + tag + "}").encode()) for tag in tags]
        assert all(i * 16384 // shards <= slot < (i + 1) * 16384 // shards
                   for i, slot in enumerate(slots))
    assert shard_tags(64) == shard_tags(64)  # recorded, but also reproducible


def test_every_script_and_round_of_a_job_touches_one_slot(
        client: fakeredis.FakeRedis, monkeypatch: pytest.MonkeyPatch) -> None:
    touched: list[tuple[str, ...]] = []
    script_call, round_call = Script.__call__, Round.call

    def script(self: Script, keys: Sequence[Any] = (), args: Sequence[Any] = (),
               client: Any = None) -> Any:
        touched.append(tuple(keys))
        return script_call(self, keys, args, client)

    def queued(self: Round, script_: Script, keys: Sequence[Any], *rest: Any) -> Any:
        touched.append(tuple(keys))
        return round_call(self, script_, keys, *rest)

    monkeypatch.setattr(Script, "__call__", script)
    monkeypatch.setattr(Round, "call", queued)
    store = Store(client, "one", log_shards=5)
    settings = Settings(engine="bm25@2", batch_size=4)
    pipe = Pipeline(store, RecordingDispatcher(ledger=store), settings)
    pipe.add_corpus(DOCS, "port")
    refs = pipe.submit_many([RetrievalRequest(query=f"crane {i}", seed=f"s{i}")
                             for i in range(30)], "port")
    store.jobs.deliver([r.job_id for r in refs], "w")
    Executor(store, settings).run([r.job_id for r in refs], "w")
    stale = store.jobs.stale(queued_before=1e12, running_before=0, holding=lambda _: {},
                             limit=100)
    assert all(store.jobs.get(r.job_id).state == "done" for r in refs) and stale == []
    assert {store.keys.shard_of(r.job_id) for r in refs} == {0, 1, 2, 3, 4}
    assert len(touched) >= 30
    for keys in touched:
        assert len({key_slot(k.encode()) for k in keys}) == 1, keys


def test_a_sharded_store_signs_a_checkpoint_set_and_proves_each_result_in_its_shard(
        client: fakeredis.FakeRedis) -> None:
    store = Store(client, "p", log_shards=3)
    settings = Settings(engine="bm25@2")
    pipe = Pipeline(store, RecordingDispatcher(ledger=store), settings)
    pipe.add_corpus(DOCS, "port")
    refs = pipe.submit_many([RetrievalRequest(query=f"berth {i}", seed=f"s{i}")
                             for i in range(9)], "port")
    Executor(store, settings).run([r.job_id for r in refs], "w")
    note = checkpoints.sign_now(store, PRIVATE)
    signed = checkpoints.checked(note, VERIFIER)
    assert signed.is_set and [t.size for t in signed.trees] == [log.size() for log in
                                                                store.logs]
    assert signed.size == 9 and note.split("\n")[1] == "checkpoint set"
    for ref in refs:
        proof = checkpoints.inclusion(store, ref.job_id)
        assert proof.verified and proof.shard == store.keys.shard_of(ref.job_id)
    assert checkpoints.current(store, PRIVATE) == note  # nothing grew: not signed again


def test_a_checkpoint_set_reads_back_and_a_plain_checkpoint_is_a_set_of_one() -> None:
    trees = (Tree(3, bytes(32)), Tree(0, bytes(range(32))))
    written = SignedTrees("example.org/log", trees, True)
    assert SignedTrees.parse(written.body()) == written
    plain = SignedTrees("example.org/log", (Tree(7, b"\x01" * 32),), False)
    assert plain.body().split("\n")[1] == "7" and SignedTrees.parse(plain.body()) == plain
    for body, message in (("o\ncheckpoint set\n3\n1 " + "A" * 43 + "=\n", "says '3' shards"),
                          ("o\ncheckpoint set\n1\n01 " + "A" * 43 + "=\n", "leading zeros"),
                          ("o\ncheckpoint set\n1\n1 AAAA\n", "32-byte root")):
        with pytest.raises(NoteFormatError, match=message):
            SignedTrees.parse(body)
