"""Merkle proofs reproduce the transparency-dev vectors and equal a brute-force RFC 9162 tree."""

from __future__ import annotations

import base64
import json
import math
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rookhaven.errors import MerkleRangeError, MissingNodeError
from rookhaven.transparency import merkle
from tests.conftest import ROOT, SHARED
from tests.reference_merkle import ReferenceTree

SHARED_VECTORS = SHARED / "vectors" / "rfc6962"
CHECKED_IN = ROOT / "tests" / "vectors" / "rfc6962"
VECTORS = SHARED_VECTORS if SHARED_VECTORS.is_dir() else CHECKED_IN
EIGHT_LEAVES = [bytes.fromhex(h) for h in (
    "", "00", "10", "2021", "3031", "40414243", "5051525354555657",
    "606162636465666768696a6b6c6d6e6f")]
EIGHT_ROOT = "XcnaeacGWamtVZy3Ad7ZoqudgjqtL0lgz+Nw7/RgQyg="


class Store:
    """What the storage layer keeps: every complete subtree, per level; it counts reads.

    A view at ``size`` refuses nodes that are not complete at that size, so a proof that
    asks for an incomplete subtree fails loudly instead of reading a later tree's node.
    """

    def __init__(self, levels: list[list[bytes]], size: int) -> None:
        self.levels, self.size, self.reads = levels, size, 0

    def __getitem__(self, node: tuple[int, int]) -> bytes:
        level, index = node
        if level >= len(self.levels) or not 0 <= index < self.size >> level:
            raise KeyError(node)
        self.reads += 1
        return self.levels[level][index]

    def fetch(self, nodes: list[tuple[int, int]]) -> dict[tuple[int, int], bytes]:
        """One round trip: exactly the nodes asked for."""
        return {node: self[node] for node in nodes}


def build_levels(leaf_hashes: list[bytes]) -> list[list[bytes]]:
    levels = [list(leaf_hashes)]
    while len(levels[-1]) >= 2:
        below = levels[-1]
        levels.append([merkle.node_hash(below[i], below[i + 1])
                       for i in range(0, len(below) - 1, 2)])
    return levels


def leaves(n: int) -> list[bytes]:
    return [merkle.leaf_hash(i.to_bytes(4, "big")) for i in range(n)]


BIG = 10_000
BIG_LEAVES = leaves(BIG)
BIG_LEVELS = build_levels(BIG_LEAVES)
BIG_REFERENCE = ReferenceTree(BIG_LEAVES)


def _b64(value: str | None) -> bytes:
    return base64.b64decode(value or "")


def _proof(case: dict[str, Any]) -> list[bytes]:
    return [_b64(p) for p in case["proof"] or []]


def _vector_files(kind: str) -> Iterator[Path]:
    yield from sorted((VECTORS / kind).rglob("*.json"))


def _id(path: Path) -> str:
    return str(path.relative_to(VECTORS))


# --- the transparency-dev vectors -------------------------------------------------------

def test_the_checked_in_vectors_are_the_shared_ones_when_both_exist() -> None:
    assert list(_vector_files("inclusion")) and list(_vector_files("consistency"))
    if not SHARED_VECTORS.is_dir():
        pytest.skip(f"{SHARED_VECTORS} is absent; the checked-in subset is used alone")
    for path in CHECKED_IN.rglob("*.json"):
        shared = SHARED_VECTORS / path.relative_to(CHECKED_IN)
        assert json.loads(path.read_text()) == json.loads(shared.read_text()), path


@pytest.mark.parametrize("path", list(_vector_files("inclusion")), ids=_id)
def test_every_inclusion_vector_verifies_exactly_when_it_should(path: Path) -> None:
    case = json.loads(path.read_text())
    # Only happy paths (and the one matching single entry) are meant to verify.
    assert case["wantErr"] == (path.name not in {"happy-path.json",
                                                 "matching-root-and-leaf.json"})
    verified = merkle.verify_inclusion(case["leafIdx"], case["treeSize"],
                                       _b64(case["leafHash"]), _proof(case), _b64(case["root"]))
    assert verified is not case["wantErr"], case["desc"]


@pytest.mark.parametrize("path", list(_vector_files("consistency")), ids=_id)
def test_every_consistency_vector_verifies_exactly_when_it_should(path: Path) -> None:
    case = json.loads(path.read_text())
    if path.parent.name != "additional":
        assert case["wantErr"] == (path.name != "happy-path.json")
    verified = merkle.verify_consistency(case["size1"], case["size2"], _b64(case["root1"]),
                                         _b64(case["root2"]), _proof(case))
    assert verified is not case["wantErr"], case["desc"]


def test_the_happy_path_proofs_are_the_ones_we_compute_for_the_eight_leaf_tree() -> None:
    levels = build_levels([merkle.leaf_hash(d) for d in EIGHT_LEAVES])
    checked = 0
    for path in _vector_files("inclusion"):
        case = json.loads(path.read_text())
        if path.name == "happy-path.json":
            store = Store(levels, case["treeSize"])
            hashes = store.fetch(merkle.inclusion_nodes(case["leafIdx"], case["treeSize"]))
            assert merkle.inclusion_proof(case["leafIdx"], case["treeSize"], hashes) == \
                _proof(case)
            assert merkle.root(case["treeSize"], store.fetch(
                merkle.root_nodes(case["treeSize"]))) == _b64(case["root"])
            checked += 1
    for path in _vector_files("consistency"):
        case = json.loads(path.read_text())
        if path.name == "happy-path.json":
            old, new = case["size1"], case["size2"]
            hashes = Store(levels, new).fetch(merkle.consistency_nodes(old, new))
            assert merkle.consistency_proof(old, new, hashes) == _proof(case)
            checked += 1
    assert checked >= 2


def test_the_eight_leaf_tree_has_the_readme_root_and_empty_leaf_hash() -> None:
    levels = build_levels([merkle.leaf_hash(d) for d in EIGHT_LEAVES])
    store = Store(levels, 8)
    assert merkle.root(8, store.fetch(merkle.root_nodes(8))) == base64.b64decode(EIGHT_ROOT)
    assert merkle.leaf_hash(b"") == base64.b64decode(
        "bjQLnP+zepicpUTmu3gKLHiQHT+zNzh2hRGjBhevoB0=")
    assert merkle.root(0, {}) == merkle.EMPTY_ROOT == base64.b64decode(
        "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=")


# --- against the brute-force tree -------------------------------------------------------

def _inclusion(index: int, size: int) -> list[bytes]:
    store = Store(BIG_LEVELS, size)
    return merkle.inclusion_proof(index, size, store.fetch(merkle.inclusion_nodes(index, size)))


def _consistency(old: int, new: int) -> list[bytes]:
    store = Store(BIG_LEVELS, new)
    return merkle.consistency_proof(old, new, store.fetch(merkle.consistency_nodes(old, new)))


def _root(size: int) -> bytes:
    return merkle.root(size, Store(BIG_LEVELS, size).fetch(merkle.root_nodes(size)))


def _mutations(proof: list[bytes], rng: random.Random) -> Iterator[list[bytes]]:
    """A flipped bit in one element, each element dropped in turn, an element appended."""
    if proof:
        at, bit = rng.randrange(len(proof)), rng.randrange(8 * merkle.HASH_SIZE)
        flipped = bytearray(proof[at])
        flipped[bit // 8] ^= 1 << (bit % 8)
        yield [*proof[:at], bytes(flipped), *proof[at + 1:]]
        for drop in range(len(proof)):
            yield proof[:drop] + proof[drop + 1:]
    yield [*proof, merkle.EMPTY_ROOT]


def check_inclusion(index: int, size: int, rng: random.Random, mutate: bool = True) -> None:
    proof = _inclusion(index, size)
    root = BIG_REFERENCE.mth(0, size)
    assert proof == BIG_REFERENCE.inclusion(index, size)
    assert merkle.verify_inclusion(index, size, BIG_LEAVES[index], proof, root)
    if not mutate:
        return
    for bad in _mutations(proof, rng):
        assert not merkle.verify_inclusion(index, size, BIG_LEAVES[index], bad, root)
    other = (index + 1) % size
    if other != index:
        assert not merkle.verify_inclusion(other, size, BIG_LEAVES[index], proof, root)


def check_consistency(old: int, new: int, rng: random.Random) -> None:
    proof = _consistency(old, new)
    old_root, new_root = BIG_REFERENCE.mth(0, old), BIG_REFERENCE.mth(0, new)
    assert proof == BIG_REFERENCE.consistency(old, new)
    assert merkle.verify_consistency(old, new, old_root, new_root, proof)
    for bad in _mutations(proof, rng):
        assert not merkle.verify_consistency(old, new, old_root, new_root, bad)
    if old != new:
        assert not merkle.verify_consistency(old, new, new_root, old_root, proof)


def _sample_indices(size: int, rng: random.Random, count: int = 20) -> set[int]:
    return {0, size - 1, *(rng.randrange(size) for _ in range(count))}


def _sample_olds(new: int, rng: random.Random) -> set[int]:
    powers = {1 << p for p in range(new.bit_length()) if 1 << p <= new}
    return {1, new, max(1, new - 1), *powers, *(rng.randint(1, new) for _ in range(5))}


def test_every_size_up_to_300_gives_the_reference_root_and_proofs_for_every_leaf() -> None:
    rng = random.Random(6962)
    for size in range(1, 301):
        assert _root(size) == BIG_REFERENCE.mth(0, size)
        # Every leaf's proof is compared; mutations are tried on a sample, for time.
        mutated = _sample_indices(size, rng, count=3)
        for index in range(size):
            check_inclusion(index, size, rng, mutate=index in mutated)
        for old in _sample_olds(size, rng):
            check_consistency(old, size, rng)


@settings(max_examples=60, deadline=None)
@given(size=st.integers(1, BIG), seed=st.integers(0, 2**32 - 1))
def test_random_sizes_up_to_10000_give_the_reference_proofs(size: int, seed: int) -> None:
    rng = random.Random(seed)
    assert _root(size) == BIG_REFERENCE.mth(0, size)
    for index in _sample_indices(size, rng):
        check_inclusion(index, size, rng)
    for old in _sample_olds(size, rng):
        check_consistency(old, size, rng)


@settings(max_examples=100, deadline=None)
@given(data=st.data())
def test_random_consistency_pairs_give_the_reference_proofs(data: st.DataObject) -> None:
    new = data.draw(st.integers(1, BIG), label="new")
    old = data.draw(st.integers(1, new), label="old")
    check_consistency(old, new, random.Random(old * BIG + new))


# --- integration of appended leaves -----------------------------------------------------

def test_integrating_leaf_by_leaf_with_parents_builds_every_complete_subtree() -> None:
    size = 1030
    reference = ReferenceTree(BIG_LEAVES[:size])
    built: dict[tuple[int, int], bytes] = {}
    for n in range(1, size + 1):
        built[(0, n - 1)] = BIG_LEAVES[n - 1]
        for node in merkle.parents(n):
            assert node not in built
            left, right = merkle.children(*node)
            built[node] = merkle.node_hash(built[left], built[right])
        if n in {1, 2, 3, 7, 8, 255, 256, 1000, size}:
            assert built == reference.complete_subtrees(n)
    assert built == reference.complete_subtrees(size)


def test_parents_of_a_power_of_two_climb_to_the_root_and_of_an_odd_size_are_none() -> None:
    assert merkle.parents(8) == [(1, 3), (2, 1), (3, 0)]
    assert merkle.parents(7) == []
    assert merkle.parents(12) == [(1, 5), (2, 2)]
    assert merkle.children(3, 1) == ((2, 2), (2, 3))


# --- cost and misuse --------------------------------------------------------------------

def test_an_inclusion_proof_in_a_million_leaf_tree_reads_at_most_two_log2_n_nodes() -> None:
    size = 1_000_000
    bound = 2 * math.ceil(math.log2(size))  # 40
    rng = random.Random(1)
    counts = {index: len(merkle.inclusion_nodes(index, size))
              for index in {0, 1, size // 2, size - 2, size - 1,
                            *(rng.randrange(size) for _ in range(2000))}}
    assert max(counts.values()) <= bound
    # 1,000,000 = 2**19 + ... + 2**6 (7 one-bits). Leaf 0 reads its 19 siblings inside
    # the first 2**19 subtree, then the incomplete rest folded from its 6 complete subtrees.
    assert counts[0] == 19 + 6
    # The last leaf reads its 6 siblings inside the last 2**6 subtree, then the 6 others.
    assert counts[size - 1] == 6 + 6


def test_a_proof_needing_a_node_the_caller_did_not_supply_names_it() -> None:
    with pytest.raises(MissingNodeError, match=r"\(0, 1\)"):
        merkle.inclusion_proof(0, 2, {})


@pytest.mark.parametrize(("call", "args"), [
    (merkle.inclusion_nodes, (5, 5)), (merkle.inclusion_nodes, (-1, 5)),
    (merkle.inclusion_nodes, (0, 0)), (merkle.consistency_nodes, (0, 5)),
    (merkle.consistency_nodes, (6, 5)), (merkle.root_nodes, (-1,)),
    (merkle.parents, (0,)), (merkle.children, (0, 3)),
])
def test_requests_outside_the_tree_are_refused(call: Any, args: tuple[int, ...]) -> None:
    with pytest.raises(MerkleRangeError):
        call(*args)


def test_verification_refuses_impossible_sizes_and_short_hashes() -> None:
    leaf = BIG_LEAVES[0]
    assert not merkle.verify_inclusion(0, 0, leaf, [], merkle.EMPTY_ROOT)
    assert not merkle.verify_inclusion(1, 1, leaf, [], leaf)
    assert not merkle.verify_inclusion(-1, 1, leaf, [], leaf)
    assert not merkle.verify_inclusion(0, 1, leaf[:31], [], leaf[:31])
    assert not merkle.verify_consistency(0, 0, merkle.EMPTY_ROOT, merkle.EMPTY_ROOT, [])
    assert not merkle.verify_consistency(0, 3, merkle.EMPTY_ROOT, _root(3), [])
    assert not merkle.verify_consistency(3, 2, _root(3), _root(2), [])
    proof = _consistency(3, 5)
    assert not merkle.verify_consistency(3, 5, _root(3), _root(5), [p[:31] for p in proof])
