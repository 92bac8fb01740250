"""The log's mirror as C2SP tlog-tiles files: paths, bundles, growth, and refusals."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

import fakeredis
import pytest

from rookhaven.errors import MirrorError, TileFormatError
from rookhaven.store import Store
from rookhaven.transparency import checkpoints, merkle, tiles
from rookhaven.transparency.leaf import parse_leaf
from rookhaven.transparency.mirror import Mirror
from rookhaven.transparency.note import generate_key
from tests.reference_merkle import ReferenceTree
from tests.unit.test_log_store import put


@pytest.fixture
def store() -> Iterator[Store]:
    client = fakeredis.FakeRedis()
    yield Store(client, "m", clock=lambda: 1_767_225_600.0)
    client.close()


def test_tile_paths_follow_the_c2sp_spelling() -> None:
    assert tiles.index_path(0) == "000"
    assert tiles.index_path(67) == "067"
    assert tiles.index_path(1234067) == "x001/x234/067"
    assert tiles.index_path(1000) == "x001/000"
    assert tiles.tile_path(0, 1234067, 256) == "tile/0/x001/x234/067"
    assert tiles.tile_path(2, 3, 17) == "tile/2/003.p/17"
    assert tiles.bundle_path(5, 255) == "tile/entries/005.p/255"
    with pytest.raises(TileFormatError):
        tiles.tile_path(0, 0, 0)


def test_bundles_round_trip_and_a_cut_bundle_is_named() -> None:
    entries = [b"", b"a", b"x" * 300]
    data = tiles.bundle(entries)
    assert data[:2] == b"\x00\x00" and tiles.unbundle(data, "b") == entries
    with pytest.raises(TileFormatError, match="b: entry 2 runs past the end"):
        tiles.unbundle(data[:-1], "b")
    with pytest.raises(TileFormatError, match="does not fit"):
        tiles.bundle([b"x" * 70_000])


def test_changed_tiles_are_the_ones_that_grow() -> None:
    assert list(tiles.changed(0, 3)) == [(0, 0, 3)]
    assert list(tiles.changed(3, 256)) == [(0, 0, 256), (1, 0, 1)]
    assert list(tiles.changed(256, 300)) == [(0, 1, 44)]
    assert list(tiles.changed(300, 300)) == []


@pytest.mark.parametrize("steps", [[1], [3, 256, 300], [255, 256, 257], [600, 1100]])
def test_a_mirror_grows_with_the_log_and_gives_its_roots_and_leaves(
        store: Store, tmp_path: Path, steps: list[int]) -> None:
    mirror = Mirror(tmp_path / "m")
    done = 0
    for size in steps:
        put(store, size - done, start=done)
        done = size
        growth = mirror.update(store, page=4096)
        assert (growth.after, mirror.size()) == (size, size)
        leaves = [data for _, data in store.log.leaves()]
        reference = ReferenceTree([merkle.leaf_hash(x) for x in leaves])
        for at in {1, size // 2 or 1, size}:  # roots at sizes the mirror never stopped at too
            assert mirror.root(at) == reference.mth(0, at) == store.log.root(at)
        assert mirror.entries(0, size) == leaves
        assert mirror.entries(size - 1, size) == leaves[-1:]
    files = sorted(p.relative_to(tmp_path / "m").as_posix()
                   for p in (tmp_path / "m").rglob("*") if p.is_file())
    assert not any("/.tmp-" in f for f in files)


def test_the_checkpoint_kept_is_the_newest_signed_and_checks_against_the_tiles(
        store: Store, tmp_path: Path) -> None:
    private, _ = generate_key("rookhaven.test/log", b"\x07" * 32)
    put(store, 10)
    note = checkpoints.sign_now(store, private)
    put(store, 5, start=10)
    growth = Mirror(tmp_path).update(store)
    assert growth.checkpoint_size == 10 and Mirror(tmp_path).checkpoint() == note
    assert checkpoints.checked(note, None).trees[0].root == Mirror(tmp_path).root(10)


def test_a_mirror_refuses_a_truncated_or_rewritten_log_and_a_changed_file(
        store: Store, tmp_path: Path) -> None:
    put(store, 300)
    mirror = Mirror(tmp_path)
    mirror.update(store)
    leaves_key = store.keys.shards[0].log_leaves
    store.client.rpop(leaves_key)  # truncated by one
    with pytest.raises(MirrorError, match="fewer than the 300 mirrored"):
        mirror.update(store)
    store.client.rpush(leaves_key, b"{}")  # the size again, and a first hash changed
    for level in range(9):  # a first leaf rewritten and its tree recomputed
        store.client.setrange(store.keys.shards[0].log_hashes(level, 0), 0, b"\x00" * 32)
    with pytest.raises(MirrorError, match="rewritten"):
        mirror.update(store)
    assert mirror.size() == 300  # nothing written by a refused update
    bundle = tmp_path / tiles.bundle_path(0, 256)
    bundle.write_bytes(bundle.read_bytes()[:-1])
    with pytest.raises(TileFormatError, match="runs past the end"):
        mirror.entries(0, 10)


def test_a_leaf_list_changed_under_its_hashes_is_not_mirrored(store: Store,
                                                              tmp_path: Path) -> None:
    keys = put(store, 5)
    leaves = store.keys.shards[0].log_leaves
    store.client.lset(leaves, 2, store.client.lindex(leaves, 3))
    with pytest.raises(MirrorError, match="leaf 2 of the store's log does not hash"):
        Mirror(tmp_path).update(store)
    assert Mirror(tmp_path).size() == 0 and parse_leaf(b"{}") is None
    assert len(keys) == 5 and hashlib.sha256(b"").digest() == merkle.EMPTY_ROOT
