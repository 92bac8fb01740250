"""RFC 6962 / RFC 9162 Merkle tree hashes, inclusion and consistency proofs, over stored subtrees.

Nodes are complete subtrees ``(level, index)`` covering leaves
``[index * 2**level, (index + 1) * 2**level)``; a store keeps every complete subtree, so
a tree of ``size`` leaves has ``size >> level`` nodes at each level. Each computation comes
in two phases: ``*_nodes`` names the complete subtrees it needs (so a store fetches them
in one round trip) and the function of the same name computes from their hashes.

The hash of an incomplete range is folded from its complete subtrees right to left, which
is what RFC 6962's MTH does: the left child of a split is always a complete ``2**k``
subtree and only the right part recurses.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence

from ..errors import MerkleRangeError, MissingNodeError

Node = tuple[int, int]
Hashes = Mapping[Node, bytes]
HASH_SIZE = 32
EMPTY_ROOT = hashlib.sha256(b"").digest()


def leaf_hash(data: bytes) -> bytes:
    """SHA-256(0x00 || data), the RFC 6962 leaf hash."""
    return hashlib.sha256(b"\x00" + data).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    """SHA-256(0x01 || left || right), the RFC 6962 interior node hash."""
    return hashlib.sha256(b"\x01" + left + right).digest()


def children(level: int, index: int) -> tuple[Node, Node]:
    """The two child coordinates of node ``(level, index)``; leaves have none."""
    if level < 1 or index < 0:
        raise MerkleRangeError(f"node ({level}, {index}) has no children; need level >= 1")
    return (level - 1, 2 * index), (level - 1, 2 * index + 1)


def parents(size: int) -> list[Node]:
    """The nodes above level 0 that leaf ``size - 1`` completes, lowest first.

    Appending leaf ``size - 1`` completes the node at level ``l`` exactly when ``2**l``
    divides ``size``; an integrator hashes them in this order, each from its
    ``children``, which exist by then.
    """
    _require(size >= 1, f"tree size {size} has no last leaf; need size >= 1")
    found = []
    level = 1
    while size % (1 << level) == 0:
        found.append((level, (size >> level) - 1))
        level += 1
    return found


def _split(n: int) -> int:
    """The largest power of two smaller than ``n`` (n >= 2): the size of MTH's left part."""
    return 1 << ((n - 1).bit_length() - 1)


def _range_nodes(lo: int, hi: int) -> list[Node]:
    """The complete subtrees covering ``[lo, hi)``, largest first.

    Only ranges MTH recursion produces are asked for: ``lo`` is a multiple of the largest
    power of two not above ``hi - lo``, so the binary digits of the length give the nodes.
    """
    nodes = []
    while lo < hi:
        level = (hi - lo).bit_length() - 1
        nodes.append((level, lo >> level))
        lo += 1 << level
    return nodes


def _fold(nodes: Sequence[Node], hashes: Hashes) -> bytes:
    """MTH of the range ``nodes`` cover: the right end hashed in first, as MTH recurses."""
    result = _lookup(nodes[-1], hashes)
    for node in reversed(nodes[:-1]):
        result = node_hash(_lookup(node, hashes), result)
    return result


def _lookup(node: Node, hashes: Hashes) -> bytes:
    try:
        return hashes[node]
    except KeyError:
        raise MissingNodeError(f"the hash of node {node} was not supplied") from None


def _require(condition: bool, message: str) -> None:
    if not condition:
        raise MerkleRangeError(message)


def _unique(ranges: Sequence[tuple[int, int]]) -> list[Node]:
    """Every complete subtree the ranges need, each once, in first-use order."""
    return list(dict.fromkeys(node for lo, hi in ranges for node in _range_nodes(lo, hi)))


def root_nodes(size: int) -> list[Node]:
    """The complete subtrees whose hashes give the root of a tree of ``size`` leaves."""
    _require(size >= 0, f"tree size {size} is negative")
    return _range_nodes(0, size)


def root(size: int, hashes: Hashes) -> bytes:
    """MTH of the first ``size`` leaves, from the hashes of ``root_nodes(size)``."""
    nodes = root_nodes(size)
    return _fold(nodes, hashes) if nodes else EMPTY_ROOT


def _inclusion_ranges(index: int, size: int) -> list[tuple[int, int]]:
    """The leaf ranges whose MTHs make PATH(index, D[0:size]), in proof (bottom-up) order."""
    _require(0 <= index < size, f"leaf index {index} is not in a tree of size {size}")
    lo, hi = 0, size
    top_down = []
    while hi - lo > 1:
        k = _split(hi - lo)
        if index < lo + k:
            top_down.append((lo + k, hi))
            hi = lo + k
        else:
            top_down.append((lo, lo + k))
            lo += k
    return top_down[::-1]


def inclusion_nodes(index: int, size: int) -> list[Node]:
    """The complete subtrees ``inclusion_proof(index, size, ...)`` reads."""
    return _unique(_inclusion_ranges(index, size))


def inclusion_proof(index: int, size: int, hashes: Hashes) -> list[bytes]:
    """RFC 9162 2.1.3.1 PATH(index, D[0:size]), from the hashes of ``inclusion_nodes``."""
    return [_fold(_range_nodes(lo, hi), hashes) for lo, hi in _inclusion_ranges(index, size)]


def _consistency_ranges(old: int, new: int) -> list[tuple[int, int]]:
    """The leaf ranges whose MTHs make PROOF(old, D[0:new]), in proof (bottom-up) order.

    SUBPROOF's flag ``b`` says whether the current range is still a prefix the old tree
    shares with the new one; its root is then the old root itself, which is left out.
    """
    _require(0 < old <= new, f"no consistency proof from size {old} to {new}; need 0 < old <= new")
    lo, hi, whole = 0, new, True
    top_down = []
    while old - lo != hi - lo:
        k = _split(hi - lo)
        if old - lo <= k:
            top_down.append((lo + k, hi))
            hi = lo + k
        else:
            top_down.append((lo, lo + k))
            lo, whole = lo + k, False
    if not whole:
        top_down.append((lo, hi))
    return top_down[::-1]


def consistency_nodes(old: int, new: int) -> list[Node]:
    """The complete subtrees ``consistency_proof(old, new, ...)`` reads."""
    return _unique(_consistency_ranges(old, new))


def consistency_proof(old: int, new: int, hashes: Hashes) -> list[bytes]:
    """RFC 9162 2.1.4.1 PROOF(old, D[0:new]), from the hashes of ``consistency_nodes``."""
    return [_fold(_range_nodes(lo, hi), hashes) for lo, hi in _consistency_ranges(old, new)]


def _well_formed(hashes: Sequence[bytes]) -> bool:
    return all(isinstance(h, bytes) and len(h) == HASH_SIZE for h in hashes)


def verify_inclusion(
    index: int, size: int, leaf: bytes, proof: Sequence[bytes], root_hash: bytes
) -> bool:
    """RFC 9162 2.1.3.2: does ``proof`` show leaf hash ``leaf`` at ``index`` under ``root_hash``?"""
    if not 0 <= index < size or not _well_formed([leaf, *proof]):
        return False
    fn, sn, r = index, size - 1, leaf
    for p in proof:
        if sn == 0:
            return False  # the proof is longer than the path from this leaf to the root
        if fn & 1 or fn == sn:
            r = node_hash(p, r)
            # A right edge with no sibling: climb until this node is a right child again.
            while not fn & 1 and fn != 0:
                fn, sn = fn >> 1, sn >> 1
        else:
            r = node_hash(r, p)
        fn, sn = fn >> 1, sn >> 1
    return sn == 0 and r == root_hash


def verify_consistency(
    old: int, new: int, old_root: bytes, new_root: bytes, proof: Sequence[bytes]
) -> bool:
    """RFC 9162 2.1.4.2: does ``proof`` show the tree ``old_root`` is a prefix of ``new_root``?

    Size 0 is refused (RFC 9162 defines no proof from the empty tree; the transparency-dev
    vectors reject it), and equal sizes need an empty proof and equal roots.
    """
    if old <= 0 or old > new:
        return False
    if old == new:
        return not proof and old_root == new_root
    if not proof or not _well_formed([old_root, *proof]):
        return False
    path = [old_root, *proof] if old & (old - 1) == 0 else list(proof)
    fn, sn = old - 1, new - 1
    while fn & 1:
        fn, sn = fn >> 1, sn >> 1
    fr = sr = path[0]
    for c in path[1:]:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            fr, sr = node_hash(c, fr), node_hash(c, sr)
            while not fn & 1 and fn != 0:
                fn, sn = fn >> 1, sn >> 1
        else:
            sr = node_hash(sr, c)
        fn, sn = fn >> 1, sn >> 1
    return sn == 0 and fr == old_root and sr == new_root
