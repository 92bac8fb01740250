"""Signing checkpoints at the edge: the key file's rules, when a new checkpoint is signed."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import fakeredis
import pytest

from rookhaven.errors import ConfigError, NotFoundError
from rookhaven.store import Store
from rookhaven.transparency import checkpoints, merkle
from rookhaven.transparency.note import generate_key, verify_checkpoint
from tests.results_support import AUDIT, framed

PRIVATE, VERIFIER = generate_key("rookhaven.test/log", bytes(32))


@pytest.fixture
def store() -> Iterator[Store]:
    client = fakeredis.FakeRedis()
    yield Store(client, "c")
    client.close()


def put(store: Store, n: int, start: int = 0) -> None:
    for i in range(start, start + n):
        store.results.put(f"sha256:{i:064x}", "sha256:c", framed(b"[%d]" % i), AUDIT)


def test_a_key_file_others_can_read_is_refused_without_showing_the_key(tmp_path: Path) -> None:
    path = tmp_path / "log.key"
    path.write_text(PRIVATE + "\n")
    os.chmod(path, 0o644)
    with pytest.raises(ConfigError, match="chmod 600") as caught:
        checkpoints.read_private_key(path)
    assert PRIVATE.split("+")[-1] not in str(caught.value)
    os.chmod(path, 0o600)
    assert checkpoints.read_private_key(path) == PRIVATE
    path.write_text("not a key\n")
    with pytest.raises(ConfigError, match="PRIVATE\\+KEY"):
        checkpoints.read_private_key(path)


def test_a_checkpoint_is_signed_only_when_the_log_grew(store: Store) -> None:
    with pytest.raises(NotFoundError, match="no checkpoint has been signed yet"):
        checkpoints.current(store, None)
    put(store, 5)
    first = checkpoints.current(store, PRIVATE)
    assert checkpoints.current(store, PRIVATE) == first == checkpoints.current(store, None)
    signed = verify_checkpoint(first, VERIFIER)
    assert (signed.origin, signed.size) == ("rookhaven.test/log", 5)
    assert signed.root == store.log.root(5)
    put(store, 3, start=5)
    second = checkpoints.current(store, PRIVATE)
    assert verify_checkpoint(second, VERIFIER).size == 8
    assert [note for _, note in store.checkpoints.since()] == [first, second]


def test_a_checkpoint_file_an_editor_gave_a_byte_order_mark_still_verifies(
        store: Store, tmp_path: Path) -> None:
    put(store, 5)
    path = tmp_path / "cp"
    path.write_bytes(b"\xef\xbb\xbf" + checkpoints.current(store, PRIVATE).encode())
    signed = checkpoints.checked(checkpoints.read_note(path, "a checkpoint"), VERIFIER)
    assert signed.trees[0].size == 5


def test_an_inclusion_proof_is_against_the_latest_checkpoint_and_verifies(store: Store) -> None:
    put(store, 9)
    checkpoints.sign_now(store, PRIVATE)
    found = checkpoints.inclusion(store, f"sha256:{4:064x}")
    assert (found.leaf_index, found.tree.size, found.verified) == (4, 9, True)
    assert merkle.verify_inclusion(4, 9, merkle.leaf_hash(found.leaf), found.proof,
                                   found.tree.root)
    put(store, 3, start=9)  # leaves 9.. are after the checkpoint
    with pytest.raises(NotFoundError, match="after the checkpoint"):
        checkpoints.inclusion(store, f"sha256:{10:064x}")
