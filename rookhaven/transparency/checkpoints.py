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
from .leaf import Leaf, parse_leaf
from .note import Checkpoint, sign_checkpoint, verifier_of, verify_checkpoint


def read_note(path: Path, what: str) -> str:
    """The text of a note file (a checkpoint or key): NoteFormatError, naming ``what`` it
    should hold, if it cannot be read or is not UTF-8 text."""
    try:
        return path.read_text(encoding="utf-8")
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
    found = store.log.checkpoints()
    return found[-1][1] if found else None


def sign_now(store: Store, private_key: str) -> str:
    """Integrate the log, sign a checkpoint of it as it is now, keep it and return it."""
    size = store.log.integrate()
    # The log's origin is its key's name: one key, one log.
    origin = verifier_of(private_key).split("+", 1)[0]
    root = store.log.root(size)
    # Never sign a tree a failover could take back: the replicas must hold it first.
    store.replication.confirm(f"integrating the log to {size} leaves")
    note = sign_checkpoint(Checkpoint(origin=origin, size=size, root=root), private_key)
    store.log.add_checkpoint(note, store.now())
    store.replication.confirm("storing a checkpoint")
    return note


def current(store: Store, private_key: str | None) -> str:
    """A checkpoint of the log as it is now: the latest, signed anew when the log has grown
    since and ``private_key`` is held."""
    note = latest(store)
    grown = note is None or Checkpoint.parse(_body(note)).size < store.log.size()
    if private_key is not None and grown:
        return sign_now(store, private_key)
    if note is None:
        raise NotFoundError("no checkpoint has been signed yet: set ROOKHAVEN_LOG_KEY_FILE "
                            "where beat runs, or run `rookhaven log checkpoint` with it")
    return note


@dataclass(frozen=True)
class Inclusion:
    """A result's leaf and the proof that the checkpoint's tree includes it."""

    key: str
    leaf_index: int
    leaf: bytes
    proof: list[bytes]
    checkpoint: Checkpoint
    note: str

    @property
    def verified(self) -> bool:
        """Whether the proof takes the leaf to the checkpoint's root."""
        return merkle.verify_inclusion(self.leaf_index, self.checkpoint.size,
                                       merkle.leaf_hash(self.leaf), self.proof,
                                       self.checkpoint.root)

    def as_json(self) -> dict[str, Any]:
        """JSON-ready, hashes in base64 as C2SP notes write them."""
        return {"key": self.key, "leaf_index": self.leaf_index,
                "tree_size": self.checkpoint.size, "leaf": self.leaf.decode(),
                "leaf_hash": _b64(merkle.leaf_hash(self.leaf)),
                "proof": [_b64(p) for p in self.proof], "root": _b64(self.checkpoint.root),
                "checkpoint": self.note, "verified": self.verified}


def inclusion(store: Store, key: str, note: str | None = None) -> Inclusion:
    """The inclusion proof of result ``key`` in the tree ``note`` (default: the latest
    stored checkpoint) signs."""
    index = store.log.index_of(key)
    if index is None:
        raise NotFoundError(f"{key} has no leaf in the log: it was never stored, or stored "
                            "before the log (`rookhaven log backfill`)")
    note = note if note is not None else current(store, None)
    checkpoint = checked(note, None)
    if index >= checkpoint.size:
        raise NotFoundError(f"{key} is leaf {index}, after the checkpoint's {checkpoint.size} "
                            "leaves: prove it against a newer checkpoint")
    (leaf,) = [data for _, data in store.log.leaves(index, index + 1)]
    return Inclusion(key=key, leaf_index=index, leaf=leaf,
                     proof=store.log.inclusion(index, checkpoint.size),
                     checkpoint=checkpoint, note=note)


def logged_leaf(store: Store, key: str) -> Leaf | None:
    """The leaf the log holds for result ``key``, or None when it has none."""
    index = store.log.index_of(key)
    if index is None:
        return None
    found = [data for _, data in store.log.leaves(index, index + 1)]
    return parse_leaf(found[0]) if found else None


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def checked(note: str, verifier_key: str | None) -> Checkpoint:
    """The checkpoint ``note`` signs, verified with ``verifier_key`` when one is given."""
    if verifier_key is not None:
        return verify_checkpoint(note, verifier_key)
    return Checkpoint.parse(_body(note))


def _body(note: str) -> str:
    # A signed note is its text, a blank line, then signature lines.
    return note.split("\n\n", 1)[0] + "\n"
