"""The log's half of a verification: is today's store the one a pinned checkpoint signed?

Given a checkpoint an auditor kept outside Redis and the log's verifier key: the checkpoint
is signed by that key; every checkpoint the store holds is too; today's tree extends the
pinned one (a consistency proof, checked as any outsider would); every leaf up to the
pinned size still hashes to the tree and still has its result and audit with the logged
hashes; and every stored result has a leaf. Each failure names the result key it is about.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime

from ..config import Settings
from ..errors import ConfigError, RookhavenError
from ..store import Store
from ..transparency import merkle
from ..transparency.checkpoints import read_note
from ..transparency.leaf import parse_leaf
from ..transparency.note import Checkpoint, check_verifier_key, verify_checkpoint
from .models import Verdict

LOG = "log"  # the key a verdict about the log as a whole is filed under


@dataclass(frozen=True)
class PinnedCheckpoint:
    """A signed checkpoint note kept outside the store, and the key that must have signed it."""

    note: str
    verifier_key: str


def pinned_from(settings: Settings) -> PinnedCheckpoint | None:
    """The checkpoint and verifier key the settings pin, or None; both or neither."""
    file, key = settings.verify_checkpoint, settings.verify_verifier_key
    if file is None and key is None:
        return None
    if file is None or key is None:
        raise ConfigError("a pinned checkpoint needs both --checkpoint FILE and "
                          "--verifier-key VKEY (ROOKHAVEN_VERIFY_CHECKPOINT and "
                          "ROOKHAVEN_VERIFY_VERIFIER_KEY)")
    check_verifier_key(key)  # a malformed key is the caller's to fix, not an alarm about the log
    return PinnedCheckpoint(note=read_note(file, "the pinned checkpoint"), verifier_key=key)


def check_log(store: Store, pinned: PinnedCheckpoint, page: int = 1000) -> list[Verdict]:
    """Every log alarm for ``store`` against ``pinned``; empty when the log is intact."""
    try:
        checkpoint = verify_checkpoint(pinned.note, pinned.verifier_key)
    except RookhavenError as exc:
        return [Verdict(key=LOG, outcome="bad-signature",
                        detail=f"the pinned checkpoint does not verify: {exc}")]
    verdicts = list(_stored_checkpoints(store, pinned.verifier_key))
    size = store.log.integrate()
    problem = _consistency(store, checkpoint, size)
    if problem is not None:
        verdicts.append(Verdict(key=LOG, outcome="log-inconsistent", detail=problem))
    # Even in a log that no longer extends the pinned tree, every result it still holds is
    # checked, and every stored result it lacks (a truncated leaf's) is named.
    verdicts += _leaves(store, min(size, checkpoint.size), page)
    verdicts += _unlogged(store, page)
    return verdicts


def _stored_checkpoints(store: Store, verifier_key: str) -> Iterator[Verdict]:
    for signed_at, note in store.log.checkpoints():
        try:
            verify_checkpoint(note, verifier_key)
        except RookhavenError as exc:
            yield Verdict(key=LOG, outcome="bad-signature",
                          detail=f"the checkpoint stored at {signed_at:.3f} does not verify "
                                 f"with the pinned key: {exc}")


def _consistency(store: Store, checkpoint: Checkpoint, size: int) -> str | None:
    if size < checkpoint.size:
        return (f"the log holds {size} leaves, fewer than the {checkpoint.size} the pinned "
                "checkpoint signed: it was truncated")
    try:
        root = store.log.root(size)
        proof = store.log.consistency(checkpoint.size, size) if checkpoint.size else []
    except RookhavenError as exc:
        return f"today's tree cannot be read: {exc}"
    if checkpoint.size and not merkle.verify_consistency(checkpoint.size, size, checkpoint.root,
                                                         root, proof):
        return (f"today's tree of {size} leaves does not extend the pinned tree of "
                f"{checkpoint.size}: the log was rewritten")
    return None


def _leaves(store: Store, size: int, page: int) -> Iterator[Verdict]:
    for start in range(0, size, page):
        stop = min(size, start + page)
        hashes = store.log.leaf_hashes(start, stop)
        batch = list(store.log.leaves(start, stop, page))
        parsed = [parse_leaf(data) for _, data in batch]
        keys = [leaf.key if leaf is not None else "" for leaf in parsed]
        results = store.results.get_many(keys)
        audits = store.results.audit_many(keys)
        for (index, data), leaf, result, audit in zip(batch, parsed, results, audits,
                                                      strict=True):
            at = (index - start) * merkle.HASH_SIZE
            if leaf is None or merkle.leaf_hash(data) != hashes[at:at + merkle.HASH_SIZE]:
                yield Verdict(key=leaf.key if leaf else LOG, outcome="log-inconsistent",
                              where=f"leaf {index}",
                              detail="the stored leaf does not hash to the logged tree")
            elif result is None or audit is None:
                yield Verdict(key=leaf.key, outcome="erased", where=f"leaf {index}",
                              detail=f"logged on {_when(leaf.stored)}, now gone")
            elif not leaf.matches(result, audit):
                what = ("result" if hashlib.sha256(result).hexdigest() != leaf.result_sha256
                        else "audit")
                yield Verdict(key=leaf.key, outcome="rewritten", where=f"leaf {index}",
                              detail=f"the stored {what} bytes are not the ones logged at "
                                     f"leaf {index}")


def _when(stored: str) -> str:
    try:
        return datetime.fromtimestamp(float(stored), UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    except (ValueError, OverflowError):
        return stored


def _unlogged(store: Store, page: int) -> Iterator[Verdict]:
    keys = sorted(set(store.results.keys()) | {k for k, _ in store.audits.scan()})
    for start in range(0, len(keys), page):
        chunk = keys[start:start + page]
        for key, logged in zip(chunk, store.log.logged(chunk), strict=True):
            if not logged:
                yield Verdict(key=key, outcome="unlogged",
                              detail="stored, but the log has no leaf for it: written around "
                                     "Rookhaven, or before the log (`rookhaven log backfill`)")
