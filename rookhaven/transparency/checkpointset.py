"""What a signed checkpoint commits to: one tree (a C2SP checkpoint) or a checkpoint set.

A sharded store keeps one RFC 6962 tree per log shard; its signed state is a *checkpoint
set*, one signed note over every shard's size and root, so that no shard can be rolled
back or re-signed apart from the others (docs/adr/0030-log-shards.md). Its text:

    <origin>
    checkpoint set
    <number of shards>
    <size of shard 0> <base64 root of shard 0>
    ...

The second line tells it from a C2SP checkpoint, whose second line is a number. A flat
store's plain checkpoint reads as a set of one tree.
"""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass

from ..errors import NoteFormatError
from .note import MAX_SIZE, Checkpoint, _b64decode, _check_text

SET_LINE = "checkpoint set"
_DECIMAL = re.compile(r"0|[1-9][0-9]*")


@dataclass(frozen=True)
class Tree:
    """One shard's tree as signed: its size and root hash."""

    size: int
    root: bytes


@dataclass(frozen=True)
class SignedTrees:
    """The trees a signed note commits to, in shard order; ``is_set`` when it is a set."""

    origin: str
    trees: tuple[Tree, ...]
    is_set: bool

    def __post_init__(self) -> None:
        if not self.trees:
            raise NoteFormatError("a checkpoint set needs at least one shard")
        for tree in self.trees:
            if not 0 <= tree.size <= MAX_SIZE or len(tree.root) != 32:
                raise NoteFormatError("a checkpoint set's tree needs a 64-bit size and a "
                                      "32-byte root")

    @property
    def size(self) -> int:
        """Leaves in every shard together."""
        return sum(tree.size for tree in self.trees)

    def body(self) -> str:
        """The note text: a C2SP checkpoint for one unsharded tree, else a checkpoint set."""
        if not self.is_set:
            (tree,) = self.trees
            return Checkpoint(self.origin, tree.size, tree.root).body()
        lines = [self.origin, SET_LINE, str(len(self.trees)),
                 *(f"{t.size} {base64.b64encode(t.root).decode()}" for t in self.trees)]
        return "".join(f"{line}\n" for line in lines)

    @classmethod
    def parse(cls, text: str) -> SignedTrees:
        """The trees ``text`` (a note's verified text) commits to; NoteFormatError if it is
        neither a checkpoint nor a checkpoint set."""
        _check_text(text)
        lines = text[:-1].split("\n")
        if len(lines) < 2 or lines[1] != SET_LINE:
            checkpoint = Checkpoint.parse(text)
            return cls(checkpoint.origin, (Tree(checkpoint.size, checkpoint.root),), False)
        origin, _, count, *rows = lines
        if not _DECIMAL.fullmatch(count) or int(count) != len(rows) or not rows:
            raise NoteFormatError(f"checkpoint set says {count!r} shards and lists "
                                  f"{len(rows)}")
        trees = []
        for i, row in enumerate(rows):
            size, _, root = row.partition(" ")
            if not _DECIMAL.fullmatch(size):
                raise NoteFormatError(f"checkpoint set shard {i}: size {size!r} is not a "
                                      "decimal number without leading zeros")
            trees.append(Tree(int(size), _b64decode(root, f"checkpoint set shard {i} root")))
        return cls(origin, tuple(trees), True)
