"""Signing and reading the log's checkpoints: the edge that holds the signing key.

The key is read from ROOKHAVEN_LOG_KEY_FILE by whoever signs (beat, `rookhaven log
checkpoint`) and never appears in a log line, an error or an output.
"""

from __future__ import annotations

import base64
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ConfigError, NoteFormatError, NotFoundError
from ..store import Store
from . import merkle
from .checkpointset import SignedTrees, Tree
from .leaf import Leaf, parse_leaf
from .note import open_note, sign_note, signed_text, verifier_of


def read_note(path: Path, what: str) -> str:
    """The text of a note file (a checkpoint or key): NoteFormatError, naming ``what`` it
    should hold, if it cannot be read or is not UTF-8 text."""
    try:
        # utf-8-sig: a byte order mark an editor adds is not part of the signed text.
        return path.read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise NoteFormatError(f"cannot read {what} {path}: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise NoteFormatError(f"{path} is not {what}: byte {exc.start} is not UTF-8 text "
                              "(a signed note is text)") from None


def read_private_key(path: Path) -> str:
    """The private key in ``path``; refused if others may read the file."""
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        raise ConfigError(f"cannot read the log key file {path}: {exc.strerror}") from None
    try:
        text = read_note(path, "the log key file").strip()
    except NoteFormatError as exc:
        raise ConfigError(str(exc)) from None
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise ConfigError(f"the log key file {path} is readable by others (mode "
                          f"{stat.S_IMODE(mode):o}); run chmod 600 on it")
    if not text.startswith("PRIVATE+KEY+"):
        raise ConfigError(f"{path} holds no private key in the note format "
                          "(PRIVATE+KEY+NAME+HASH+KEY); `rookhaven log keygen` writes one")
    return text


def latest(store: Store) -> str | None:
    """The most recently signed checkpoint note the store holds, if any."""
    found = store.checkpoints.since()
    return found[-1][1] if found else None


def sign_now(store: Store, private_key: str) -> str:
    """Integrate every shard's log, sign a checkpoint (a checkpoint set when the store is
    sharded) of them as they are now, keep it and return it."""
    mark = store.replication.mark()  # a failover before the confirmation voids it
    sizes = [log.integrate() for log in store.logs]
    # The log's origin is its key's name: one key, one log.
    origin = verifier_of(private_key).split("+", 1)[0]
    trees = tuple(Tree(size, log.root(size)) for log, size in zip(store.logs, sizes,
                                                                  strict=True))
    # Never sign a tree a failover could take back: the replicas must hold it first.
    store.replication.confirm(f"integrating the log to {sum(sizes)} leaves", since=mark)
    note = sign_note(SignedTrees(origin, trees, store.keys.sharded).body(), private_key)
    store.checkpoints.add(note, store.now())
    store.replication.confirm("storing a checkpoint", since=mark)
    return note


def current(store: Store, private_key: str | None) -> str:
    """A checkpoint of the log as it is now: the latest, signed anew when the log has grown
    since and ``private_key`` is held."""
    note = latest(store)
    grown = note is None or any(
        tree.size < log.size() for tree, log in zip(checked(note, None).trees, store.logs,
                                                    strict=False))
    if private_key is not None and grown:
        return sign_now(store, private_key)
    if note is None:
        raise NotFoundError("no checkpoint has been signed yet: set ROOKHAVEN_LOG_KEY_FILE "
                            "(a key from `rookhaven log keygen`) where beat runs, or in this "
                            "shell and run this command again")
    return note


@dataclass(frozen=True)
class Inclusion:
    """A result's leaf in its shard's log, and the proof that the signed tree includes it."""

    key: str
    shard: int
    leaf_index: int
    leaf: bytes
    proof: list[bytes]
    tree: Tree
    note: str

    @property
    def verified(self) -> bool:
        """Whether the proof takes the leaf to the signed root of its shard's tree."""
        return merkle.verify_inclusion(self.leaf_index, self.tree.size,
                                       merkle.leaf_hash(self.leaf), self.proof, self.tree.root)

    def as_json(self) -> dict[str, Any]:
        """JSON-ready, hashes in base64 as C2SP notes write them."""
        return {"key": self.key, "shard": self.shard, "leaf_index": self.leaf_index,
                "tree_size": self.tree.size, "leaf": self.leaf.decode(),
                "leaf_hash": _b64(merkle.leaf_hash(self.leaf)),
                "proof": [_b64(p) for p in self.proof], "root": _b64(self.tree.root),
                "checkpoint": self.note, "verified": self.verified}


def inclusion(store: Store, key: str, note: str | None = None,
              verifier_key: str | None = None) -> Inclusion:
    """The inclusion proof of result ``key`` in its shard's tree as ``note`` (default: the
    latest stored checkpoint) signs it, its signature checked with ``verifier_key``."""
    log = store.log_of(key)
    index = log.index_of(key)
    if index is None:
        raise NotFoundError(f"{key} has no leaf in the log: it was never stored, or stored "
                            "before the log (`rookhaven log backfill`)")
    note = note if note is not None else current(store, None)
    signed = checked(note, verifier_key)
    if len(signed.trees) != len(store.logs):
        raise NotFoundError(f"the checkpoint signs {len(signed.trees)} tree(s) and this store "
                            f"has {len(store.logs)} log shard(s): it is another log's")
    tree = signed.trees[log.shard]
    if index >= tree.size:
        raise NotFoundError(f"{key} is leaf {index} of shard {log.shard}, after the "
                            f"checkpoint's {tree.size} leaves: prove it against a newer "
                            "checkpoint")
    (leaf,) = [data for _, data in log.leaves(index, index + 1)]
    return Inclusion(key=key, shard=log.shard, leaf_index=index, leaf=leaf,
                     proof=log.inclusion(index, tree.size), tree=tree, note=note)


def logged_leaf(store: Store, key: str) -> Leaf | None:
    """The leaf the log holds for result ``key``, or None when it has none."""
    log = store.log_of(key)
    index = log.index_of(key)
    if index is None:
        return None
    found = [data for _, data in log.leaves(index, index + 1)]
    return parse_leaf(found[0]) if found else None


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def checked(note: str, verifier_key: str | None) -> SignedTrees:
    """The trees ``note`` signs, verified with ``verifier_key`` when one is given; without
    one, ``note`` must still be a signed note in form (a checkpoint stripped of its
    signature lines is refused, not read as if signed)."""
    if verifier_key is not None:
        return SignedTrees.parse(open_note(note, [verifier_key]))
    return SignedTrees.parse(signed_text(note))
