"""The transparency log in the store (fakeredis): one leaf per stored result, tiles that
integrate to the RFC 6962 tree of the leaves, proofs that verify."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator

import fakeredis
import pytest

from rookhaven.store import Store
from rookhaven.store import keys as keys_module
from rookhaven.store import log as log_module
from rookhaven.transparency import merkle
from rookhaven.transparency.leaf import leaf_for, parse_leaf
from tests.reference_merkle import ReferenceTree
from tests.results_support import framed


def mth(leaves: list[bytes]) -> bytes:
    return ReferenceTree([merkle.leaf_hash(x) for x in leaves]).mth(0, len(leaves))


@pytest.fixture
def store(monkeypatch: pytest.MonkeyPatch) -> Iterator[Store]:
    # Small tiles and batches, so a few hundred leaves cross tile and batch boundaries.
    monkeypatch.setattr(keys_module, "LOG_CHUNK", 16)
    monkeypatch.setattr(log_module, "LOG_CHUNK", 16)
    monkeypatch.setattr(log_module, "_BATCH", 5)
    from rookhaven.store import results as results_module
    monkeypatch.setattr(results_module, "LOG_CHUNK", 16)
    client = fakeredis.FakeRedis()
    yield Store(client, "t", clock=lambda: 1_767_225_600.0)
    client.close()


def put(store: Store, n: int, start: int = 0) -> list[str]:
    keys = []
    for i in range(start, start + n):
        key = "sha256:" + hashlib.sha256(str(i).encode()).hexdigest()
        audit = b'{"corpus_digest":"sha256:c","engine":{"name":"bm25","version":"1.2"}}'
        store.results.put(key, "sha256:c", framed(f"[{i}]".encode(), audit), audit)
        keys.append(key)
    return keys


def test_every_stored_result_gets_exactly_one_leaf_in_storing_order(store: Store) -> None:
    keys = put(store, 40)
    put(store, 5)  # the same results again: same bytes, no new leaves
    assert store.log.size() == 40
    leaves = [parse_leaf(data) for _, data in store.log.leaves()]
    assert [leaf.key for leaf in leaves if leaf] == keys
    assert leaves[3] is not None and leaves[3].engine == {"name": "bm25", "version": "1.2"}
    assert [store.log.index_of(k) for k in keys[:3]] == [0, 1, 2]


@pytest.mark.parametrize("n", [1, 2, 3, 16, 17, 100, 257])
def test_integrated_tiles_give_the_rfc_6962_root_and_proofs_that_verify(
        store: Store, n: int) -> None:
    put(store, n)
    assert store.log.integrate() == n
    leaves = [data for _, data in store.log.leaves()]
    assert store.log.root(n) == mth(leaves)
    for size in sorted({1, n // 2 or 1, n}):
        root = store.log.root(size)
        assert root == mth(leaves[:size])
        for index in sorted({0, size // 3, size - 1}):
            proof = store.log.inclusion(index, size)
            assert merkle.verify_inclusion(index, size, merkle.leaf_hash(leaves[index]), proof,
                                           root)
        if size < n:
            proof = store.log.consistency(size, n)
            assert merkle.verify_consistency(size, n, root, store.log.root(n), proof)


def test_integration_resumes_and_two_integrators_write_each_hash_once(store: Store) -> None:
    put(store, 50)
    store.log.integrate()
    put(store, 31, start=50)
    first, second = Store(store.client, "t"), Store(store.client, "t")
    assert first.log.integrate() == second.log.integrate() == 81
    leaves = [data for _, data in store.log.leaves()]
    assert store.log.root(81) == mth(leaves)
    assert store.log._count(1) == 40 and store.log._count(6) == 1


def test_backfill_logs_only_results_without_a_leaf(store: Store) -> None:
    keys = put(store, 3)
    store.client.delete(store.keys.shards[0].log_leaves, store.keys.shards[0].log_index,
                        store.keys.shards[0].log_hashes(0, 0))  # results stored before the log
    result, audit = store.results.get(keys[0]), store.results.audit(keys[0])
    leaf = leaf_for(keys[0], result, audit, "sha256:c", "1.000", backfilled=True).encode()
    assert store.log.backfill(keys[0], leaf) == "added"
    assert store.log.backfill(keys[0], leaf) == "logged"
    assert store.log.backfill("sha256:none", leaf) == "missing"
    (found,) = [parse_leaf(data) for _, data in store.log.leaves()]
    assert found is not None and found.backfilled and found.matches(result, audit)
