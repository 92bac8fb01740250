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
from ..errors import ConfigError, MirrorError, RookhavenError
from ..store import Store
from ..store.log import TransparencyLog
from ..store.results import audits_in
from ..transparency import merkle, tiles
from ..transparency.checkpoints import checked, read_note
from ..transparency.checkpointset import Tree
from ..transparency.leaf import Leaf, parse_leaf
from ..transparency.mirror import Mirror
from ..transparency.note import check_verifier_key
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


def check_log(store: Store, pinned: PinnedCheckpoint | None, page: int = 1000,
              mirror: Mirror | None = None) -> list[Verdict]:
    """Every log alarm for ``store`` against ``pinned`` and, if given, its ``mirror``
    outside Redis; empty when the log is intact. A sharded store's every shard is checked
    against its tree in the pinned checkpoint set."""
    signed = None
    verdicts: list[Verdict] = []
    if pinned is not None:
        try:
            signed = checked(pinned.note, pinned.verifier_key)
        except RookhavenError as exc:
            return [Verdict(key=LOG, outcome="bad-signature",
                            detail=f"the pinned checkpoint does not verify: {exc}")]
        verdicts += _stored_checkpoints(store, pinned.verifier_key)
        if len(signed.trees) != len(store.logs):
            return [*verdicts, Verdict(
                key=LOG, outcome="log-inconsistent",
                detail=f"the pinned checkpoint signs {len(signed.trees)} tree(s) and the store "
                       f"has {len(store.logs)} log shard(s): its shards were changed")]
    sizes = [log.integrate() for log in store.logs]
    pinned_sizes = [0] * len(store.logs)
    for log, size in zip(store.logs, sizes, strict=True):
        tree = signed.trees[log.shard] if signed is not None else None
        problem = _consistency(log, tree, size) if tree is not None else None
        if problem is not None:
            verdicts.append(Verdict(key=LOG, outcome="log-inconsistent",
                                    detail=_in_shard(store, log.shard, problem)))
        pinned_sizes[log.shard] = tree.size if tree is not None else 0
    if mirror is None:
        # Even in a log that no longer extends the pinned tree, every result it still holds
        # is checked, and every stored result it lacks (a truncated leaf's) is named.
        for log, size, pinned_size in zip(store.logs, sizes, pinned_sizes, strict=True):
            verdicts += _leaves(store, log, 0, min(size, pinned_size), page)
        verdicts += _unlogged(store, page, set())
        return verdicts
    logged: int = sum(sizes)
    if logged and not mirror.directory.is_dir():
        # A mistyped path, or a mirror removed to blind the check: either way nothing would
        # be judged by it, and the run would pass clean.
        return [*verdicts, Verdict(key=LOG, outcome="log-inconsistent", detail=(
            f"the log mirror {mirror.directory} is not a directory, yet the log holds "
            f"{logged} leaves: fix --mirror (or ROOKHAVEN_LOG_MIRROR_DIR), or rebuild "
            f"the mirror from a log you trust with `rookhaven log mirror {mirror.directory}`"))]
    # With a mirror, its leaves name what the store should hold, whatever was done to the
    # store's own leaf list (an erased entry shifts every index after it).
    if store.keys.sharded != mirror.sharded() and mirror.size_all():
        return [*verdicts, Verdict(key=LOG, outcome="log-inconsistent",
                                   detail=f"the mirror {mirror.directory} holds a "
                                          f"{'sharded' if mirror.sharded() else 'flat'} log "
                                          "and the store's is not")]
    keys: set[str] = set()
    for log, size, pinned_size in zip(store.logs, sizes, pinned_sizes, strict=True):
        tree = signed.trees[log.shard] if signed is not None else None
        copy = mirror.shard(log.shard) if store.keys.sharded else mirror
        try:
            held = copy.size()
            mirrored = _mirrored(copy, tree, held)
        except MirrorError as exc:  # no reference left to judge leaves by
            return [*verdicts, Verdict(key=LOG, outcome="log-inconsistent", detail=_in_shard(
                store, log.shard, f"the mirror {copy.directory} cannot be used: {exc}"))]
        verdicts += _against_mirror(store, log, copy, size, held)
        for start in range(0, held, page):
            stop = min(held, start + page)
            batch = list(enumerate(mirrored[start:stop], start=start))
            keys.update(leaf.key for _, (_, leaf, _) in batch if leaf is not None)
            verdicts += _judged(store, log, [(i, data, leaf_hash)
                                             for i, (data, _, leaf_hash) in batch])
        verdicts += _leaves(store, log, held, min(size, pinned_size), page)  # pinned past it
    verdicts += _unlogged(store, page, keys)
    return verdicts


def _in_shard(store: Store, shard: int, text: str) -> str:
    """``text`` about one shard's log, naming the shard when there are several."""
    return f"log shard {shard}: {text}" if len(store.logs) > 1 else text


def _where(log: TransparencyLog, index: int) -> str:
    return f"shard {log.shard} leaf {index}" if log.sharded else f"leaf {index}"


def _mirrored(mirror: Mirror, checkpoint: Tree | None,
              held: int) -> list[tuple[bytes, Leaf | None, bytes]]:
    """The mirror's leaves (bytes, parsed, logged hash), checked against its own tiles and
    the pinned checkpoint; MirrorError if the mirror does not hold what it says."""
    if checkpoint is not None and 0 < checkpoint.size <= held and (
            mirror.root(checkpoint.size) != checkpoint.root):
        raise MirrorError(f"its tree of {checkpoint.size} leaves is not the pinned one: the "
                          "mirror was changed")
    found = []
    for start in range(0, held, tiles.WIDTH):  # a bundle and its level-0 tile at a time
        stop = min(held, start + tiles.WIDTH)
        tile = mirror.tile(0, start // tiles.WIDTH, held)
        for index, data in enumerate(mirror.entries(start, stop), start=start):
            at = (index - start) * merkle.HASH_SIZE
            logged = tile[at:at + merkle.HASH_SIZE]
            if merkle.leaf_hash(data) != logged:
                raise MirrorError(f"its entry {index} does not hash to its own tile: the "
                                  "mirror was changed")
            found.append((data, parse_leaf(data), logged))
    return found


def _against_mirror(store: Store, log: TransparencyLog, mirror: Mirror, size: int,
                    held: int) -> list[Verdict]:
    """One verdict if the store's log no longer extends the mirror (truncated, rewritten)."""
    if size < held:
        detail = (f"the log holds {size} leaves, fewer than the {held} its mirror "
                  f"{mirror.directory} holds: it was truncated")
    elif held and log.root(held) != mirror.root(held):
        detail = (f"the log's tree of {held} leaves is not the one its mirror "
                  f"{mirror.directory} holds: the log was rewritten")
    else:
        return []
    return [Verdict(key=LOG, outcome="log-inconsistent",
                    detail=_in_shard(store, log.shard, detail))]


def _stored_checkpoints(store: Store, verifier_key: str) -> Iterator[Verdict]:
    for signed_at, note in store.checkpoints.since():
        try:
            checked(note, verifier_key)
        except RookhavenError as exc:
            yield Verdict(key=LOG, outcome="bad-signature",
                          detail=f"the checkpoint stored at {signed_at:.3f} does not verify "
                                 f"with the pinned key: {exc}")


def _consistency(log: TransparencyLog, checkpoint: Tree, size: int) -> str | None:
    if size < checkpoint.size:
        return (f"the log holds {size} leaves, fewer than the {checkpoint.size} the pinned "
                "checkpoint signed: it was truncated")
    try:
        root = log.root(size)
        proof = log.consistency(checkpoint.size, size) if checkpoint.size else []
    except RookhavenError as exc:
        return f"today's tree cannot be read: {exc}"
    if checkpoint.size and not merkle.verify_consistency(checkpoint.size, size, checkpoint.root,
                                                         root, proof):
        return (f"today's tree of {size} leaves does not extend the pinned tree of "
                f"{checkpoint.size}: the log was rewritten")
    return None


def _leaves(store: Store, log: TransparencyLog, start: int, stop: int,
            page: int) -> Iterator[Verdict]:
    """Verdicts on one shard's own leaves ``[start, stop)``."""
    for at in range(start, stop, page):
        end = min(stop, at + page)
        hashes = log.leaf_hashes(at, end)
        yield from _judged(store, log, [
            (index, data, hashes[(index - at) * merkle.HASH_SIZE:
                                 (index - at + 1) * merkle.HASH_SIZE])
            for index, data in log.leaves(at, end, page)])


def _judged(store: Store, log: TransparencyLog,
            batch: list[tuple[int, bytes, bytes]]) -> list[Verdict]:
    """Verdicts on logged leaves (index, bytes, the hash the tree holds): does each hash to
    the tree, and does the store still hold its result and audit with the logged hashes?"""
    parsed = [parse_leaf(data) for _, data, _ in batch]
    keys = [leaf.key if leaf is not None else "" for leaf in parsed]
    results = store.results.get_many(keys)
    audits = audits_in(results)  # each result's own (a result frames its audit)
    found = []
    for (index, data, logged), leaf, result, audit in zip(batch, parsed, results, audits,
                                                          strict=True):
        if leaf is None or merkle.leaf_hash(data) != logged:
            found.append(Verdict(key=leaf.key if leaf else LOG, outcome="log-inconsistent",
                                 where=_where(log, index),
                                 detail="the stored leaf does not hash to the logged tree"))
        elif result is None:
            found.append(Verdict(key=leaf.key, outcome="erased", where=_where(log, index),
                                 detail=f"logged on {_when(leaf.stored)}, now gone"))
        elif audit is None or not leaf.matches(result, audit):
            what = ("result" if hashlib.sha256(result).hexdigest() != leaf.result_sha256
                    else "audit")
            found.append(Verdict(key=leaf.key, outcome="rewritten", where=_where(log, index),
                                 detail=f"the stored {what} bytes are not the ones logged at "
                                        f"leaf {index}"))
    return found


def _when(stored: str) -> str:
    try:
        return datetime.fromtimestamp(float(stored), UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    except (ValueError, OverflowError):
        return stored


def _unlogged(store: Store, page: int, mirrored: set[str]) -> Iterator[Verdict]:
    """Stored results that neither the store's log nor its mirror (``mirrored`` keys) has."""
    keys = sorted(set(store.results.keys()) | {k for k, _ in store.audits.scan()})
    for start in range(0, len(keys), page):
        chunk = keys[start:start + page]
        by_shard: dict[int, list[str]] = {}
        for key in chunk:
            by_shard.setdefault(store.keys.shard_of(key), []).append(key)
        logged = {key: found for shard, keys in by_shard.items()
                  for key, found in zip(keys, store.logs[shard].logged(keys), strict=True)}
        for key in chunk:
            if not logged[key] and key not in mirrored:
                yield Verdict(key=key, outcome="unlogged",
                              detail="stored, but the log has no leaf for it: written around "
                                     "Rookhaven, or before the log (`rookhaven log backfill`)")
