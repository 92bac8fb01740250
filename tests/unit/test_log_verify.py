"""The verifier against a pinned checkpoint (fakeredis): an intact log verifies; an attacker
with full Redis write access but not the signing key is caught, naming the key."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import fakeredis
import pytest

from rookhaven import Document, RetrievalRequest, Retriever, canonical_bytes
from rookhaven.config import Settings
from rookhaven.core.identity import result_key
from rookhaven.errors import MirrorError
from rookhaven.pipeline import Executor, Pipeline, RecordingDispatcher
from rookhaven.store import Store
from rookhaven.transparency import checkpoints, tiles
from rookhaven.transparency.leaf import leaf_for
from rookhaven.transparency.mirror import Mirror
from rookhaven.transparency.note import generate_key
from rookhaven.verification import Selection, Verifier
from rookhaven.verification.logcheck import PinnedCheckpoint

DOCS = [Document(id=f"d{i:02d}", text=f"crane {i} berth {i % 4} tide {i % 3} delay")
        for i in range(30)]
PRIVATE, VERIFIER = generate_key("rookhaven.test/log", bytes(range(32)))
OTHER_PRIVATE, _ = generate_key("rookhaven.test/log", bytes(range(1, 33)))


@pytest.fixture(params=[None, 3], ids=["flat", "3-shards"])
def pipeline(request: pytest.FixtureRequest) -> Iterator[Pipeline]:
    """Six results in a flat store, and in one of three log shards (each attack is caught
    in whichever shard it strikes)."""
    client = fakeredis.FakeRedis()
    yield six_results(Store(client, "v", log_shards=request.param),
                      Settings(engine="bm25@2", batch_size=10))
    client.close()


def six_results(store: Store, settings: Settings) -> Pipeline:
    """What every attack strikes: six results of DOCS stored through the pipeline."""
    pipe = Pipeline(store, RecordingDispatcher(ledger=store), settings)
    pipe.add_corpus(DOCS, "port")
    refs = pipe.submit_many([RetrievalRequest(query=f"crane {i} and tide", seed=f"s{i}")
                             for i in range(6)], "port")
    Executor(pipe.store, settings).run([r.job_id for r in refs], "w")
    return pipe


def pinned(pipe: Pipeline) -> PinnedCheckpoint:
    return PinnedCheckpoint(note=checkpoints.sign_now(pipe.store, PRIVATE), verifier_key=VERIFIER)


def alarms(pipe: Pipeline, pin: PinnedCheckpoint) -> list[tuple[str, str]]:
    run = Verifier(pipe.store, pipe.settings).run(Selection(all=True), pinned=pin)
    return sorted((v.outcome, v.key) for v in run.verdicts if v.alarm)


def keys(pipe: Pipeline) -> list[str]:
    return [k for k, _ in pipe.store.audits.scan()]


def erase(pipe: Pipeline, key: str, digest: str) -> None:
    k = pipe.store.keys.shard(key)
    pipe.store.client.delete(k.result(key), k.audit(key), k.job(key))
    pipe.store.client.zrem(k.audits_by_time, key)
    pipe.store.client.zrem(k.audits_by_corpus(digest), key)


def test_an_intact_log_verifies_clean_and_later_growth_is_consistent(pipeline: Pipeline) -> None:
    pin = pinned(pipeline)
    more = pipeline.submit_many([RetrievalRequest(query="delay", seed="late")], "port")
    Executor(pipeline.store, pipeline.settings).run([r.job_id for r in more], "w")
    checkpoints.sign_now(pipeline.store, PRIVATE)
    assert alarms(pipeline, pin) == []


def test_a_result_erased_with_every_index_entry_is_caught(pipeline: Pipeline) -> None:
    pin = pinned(pipeline)
    victim = keys(pipeline)[2]
    erase(pipeline, victim, pipeline.store.corpora.resolve("port"))
    assert alarms(pipeline, pin) == [("erased", victim), ("results-missing", "store")]


def test_a_result_rewritten_consistently_for_another_query_is_caught(pipeline: Pipeline) -> None:
    pin = pinned(pipeline)
    victim = keys(pipeline)[0]
    digest = pipeline.store.corpora.resolve("port")
    erase(pipeline, victim, digest)
    # The attacker's own result, for their own query, under that query's correct key.
    retriever = Retriever(DOCS, "bm25@2")
    forged = RetrievalRequest(query="berth 3 only", seed="forged")
    key = result_key(forged, retriever.corpus.digest, retriever.identity)
    result = retriever.retrieve(forged)
    k, client = pipeline.store.keys.shard(key), pipeline.store.client
    client.set(k.result(key), canonical_bytes(result))
    client.set(k.audit(key), canonical_bytes(result.audit))
    client.zadd(k.audits_by_time, {key: 1.0})
    client.zadd(k.audits_by_corpus(digest), {key: 1.0})
    pipeline.store.jobs.create(pipeline.spec(forged, digest))
    assert alarms(pipeline, pin) == [("erased", victim), ("unlogged", key)]


def test_one_edited_result_byte_is_caught_by_the_log_and_by_the_replay(
        pipeline: Pipeline) -> None:
    pin = pinned(pipeline)
    victim = keys(pipeline)[1]
    k = pipeline.store.keys.result(victim)
    data = pipeline.store.client.get(k)
    at = data.index(b'"rank":1')
    pipeline.store.client.set(k, data[:at] + b'"rank":7' + data[at + 8:])
    assert alarms(pipeline, pin) == [("mismatch", victim), ("rewritten", victim)]


def test_a_log_rebuilt_and_signed_with_another_key_is_caught(pipeline: Pipeline) -> None:
    pin = pinned(pipeline)
    store = pipeline.store
    victim = keys(pipeline)[3]
    erase(pipeline, victim, store.corpora.resolve("port"))
    store.client.delete(store.keys.log_checkpoints)
    for k in store.keys.shards:
        store.client.delete(k.log_leaves, k.log_index,
                            *store.client.keys(k.log_hashes(0, 0)[:-3] + "*"))
    for key in keys(pipeline):  # every surviving result logged afresh, the victim never
        result, audit = store.results.get(key), store.results.audit(key)
        store.log_of(key).backfill(key, leaf_for(key, result, audit, "sha256:x", "1.000").encode())
    checkpoints.sign_now(store, OTHER_PRIVATE)
    found = alarms(pipeline, pin)
    assert ("bad-signature", "log") in found and ("log-inconsistent", "log") in found


def test_a_truncated_log_is_caught(pipeline: Pipeline) -> None:
    pin = pinned(pipeline)
    store = pipeline.store
    (longest,) = sorted(store.keys.shards, key=lambda k: -store.client.llen(k.log_leaves))[:1]
    store.client.rpop(longest.log_leaves)
    found = alarms(pipeline, pin)
    assert ("log-inconsistent", "log") in found


def test_a_pinned_checkpoint_with_a_forged_signature_is_refused(pipeline: Pipeline) -> None:
    pin = pinned(pipeline)
    body, signatures = pin.note.split("\n\n", 1)
    lines = body.split("\n")
    at = 3 if pipeline.store.keys.sharded else 1  # the (first) tree's size
    size, _, root = lines[at].partition(" ")
    lines[at] = " ".join(filter(None, [str(int(size) - 1), root]))
    forged = PinnedCheckpoint(note="\n".join(lines) + f"\n\n{signatures}",
                              verifier_key=VERIFIER)
    assert alarms(pipeline, forged)[0] == ("bad-signature", "log")


def _erase_with_its_leaf(pipeline: Pipeline) -> str:
    """The issue's attack: a result erased with its job, indexes, leaf and log index entry."""
    store = pipeline.store
    victim = keys(pipeline)[2]
    k = store.keys.shard(victim)
    index = store.log_of(victim).index_of(victim)
    assert index is not None
    leaf = store.client.lindex(k.log_leaves, index)
    erase(pipeline, victim, store.corpora.resolve("port"))
    store.client.lrem(k.log_leaves, 1, leaf)
    store.client.hdel(k.log_index, victim)
    return victim


def test_a_sharded_log_is_mirrored_one_tree_per_shard_under_its_set(
        pipeline: Pipeline, tmp_path: Path) -> None:
    note = checkpoints.sign_now(pipeline.store, PRIVATE)
    growth = Mirror(tmp_path).update(pipeline.store)
    assert growth.after == growth.checkpoint_size == 6
    assert Mirror(tmp_path).checkpoint() == note
    if pipeline.store.keys.sharded:
        assert Mirror(tmp_path).sharded() and Mirror(tmp_path).size_all() == 6
        sizes = [Mirror(tmp_path).shard(log.shard).size() for log in pipeline.store.logs]
        assert sizes == [log.size() for log in pipeline.store.logs]
        assert not (tmp_path / "shard" / "0000" / "checkpoint").exists()
    flat = Store(pipeline.store.client, "other")  # a store of the other layout: refused
    flat.results.put("sha256:" + "1" * 64, "sha256:c", *_one_result())
    with pytest.raises(MirrorError, match=r"holds a (sharded|flat) log and the store's is not"):
        Mirror(tmp_path).update(flat if pipeline.store.keys.sharded else
                                Store(pipeline.store.client, "third", log_shards=2))


def _one_result() -> tuple[bytes, bytes]:
    result = Retriever(DOCS, "bm25@2").retrieve(RetrievalRequest(query="crane", seed="o"))
    return canonical_bytes(result), canonical_bytes(result.audit)


def _mirrored_alarms(pipeline: Pipeline, pin: PinnedCheckpoint | None,
                     mirror: Path) -> list[tuple[str, str]]:
    settings = pipeline.settings.with_overrides(log_mirror_dir=mirror)
    run = Verifier(pipeline.store, settings).run(Selection(all=True), pinned=pin)
    return sorted((v.outcome, v.key) for v in run.verdicts if v.alarm)


def test_with_a_mirror_an_erasure_of_result_and_leaf_names_the_key_and_no_other(
        pipeline: Pipeline, tmp_path: Path) -> None:
    pin = pinned(pipeline)
    Mirror(tmp_path / "mirror").update(pipeline.store)
    victim = _erase_with_its_leaf(pipeline)
    without = alarms(pipeline, pin)
    # Without the mirror the shifted leaf list is all the log has: the victim is not named.
    assert ("erased", victim) not in without
    found = _mirrored_alarms(pipeline, pin, tmp_path / "mirror")
    assert ("erased", victim) in found and ("log-inconsistent", "log") in found
    accused = {key for outcome, key in found if key not in ("log", "store")}
    assert accused == {victim}, found
    # The mirror alone, with no pinned checkpoint, says the same.
    alone = _mirrored_alarms(pipeline, None, tmp_path / "mirror")
    assert {key for _, key in alone if key not in ("log", "store")} == {victim}


def test_a_mirror_path_that_is_no_directory_is_an_alarm_and_a_run_says_what_it_held(
        pipeline: Pipeline, tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    for wrong in (tmp_path / "typo", tmp_path / "file"):
        # A mistyped path (or a mirror deleted) would otherwise check nothing and pass clean.
        run = Verifier(pipeline.store, pipeline.settings.with_overrides(
            log_mirror_dir=wrong)).run(Selection(all=True))
        (bad,) = [v for v in run.verdicts if v.alarm]
        assert (bad.outcome, bad.key) == ("log-inconsistent", "log")
        assert f"the log mirror {wrong} is not a directory, yet the log holds" in bad.detail
        assert run.mirror_leaves is None
    Mirror(tmp_path / "m").update(pipeline.store)
    run = Verifier(pipeline.store, pipeline.settings.with_overrides(
        log_mirror_dir=tmp_path / "m")).run(Selection(all=True))
    assert run.mirror_leaves == sum(log.size() for log in pipeline.store.logs) > 0
    assert Verifier(pipeline.store, pipeline.settings).run(
        Selection(all=True)).mirror_leaves is None


def test_an_intact_log_and_mirror_verify_clean_and_a_changed_mirror_is_named(
        pipeline: Pipeline, tmp_path: Path) -> None:
    pin = pinned(pipeline)
    Mirror(tmp_path).update(pipeline.store)
    assert _mirrored_alarms(pipeline, pin, tmp_path) == []
    log = max(pipeline.store.logs, key=lambda log: log.size())
    held = Mirror(tmp_path).shard(log.shard) if pipeline.store.keys.sharded else Mirror(tmp_path)
    bundle = held.directory / tiles.bundle_path(0, log.size())
    data = bundle.read_bytes()
    bundle.write_bytes(data.replace(b'"backfilled":false', b'"backfilled":true ', 1))
    run = Verifier(pipeline.store, pipeline.settings.with_overrides(log_mirror_dir=tmp_path)
                   ).run(Selection(all=True), pinned=pin)
    bad = [v for v in run.verdicts if v.alarm]
    assert [(v.outcome, v.key) for v in bad] == [("log-inconsistent", "log")]
    assert "does not hash to its own tile: the mirror was changed" in bad[0].detail
