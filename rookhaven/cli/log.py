"""``rookhaven log``: the transparency log of stored results: keys, checkpoints, proofs.

    rookhaven log keygen NAME --out FILE     write a signing key (mode 0600), print its verifier key
    rookhaven log checkpoint                 a signed checkpoint of the log as it is now
    rookhaven log checkpoints [--since T]    every stored checkpoint, one JSON object a line
    rookhaven log prove KEY [--checkpoint FILE]   the inclusion proof of a result (JSON)
    rookhaven log consistency OLD NEW        the consistency proof between two tree sizes or
                                             checkpoint files (JSON)
    rookhaven log backfill                   log the results stored before the log existed
    rookhaven log mirror [DIR]               copy the log to DIR (default: ROOKHAVEN_LOG_MIRROR_DIR)
                                             as C2SP tlog-tiles files, append-only
"""

from __future__ import annotations

import argparse
import base64
import os
import sys
from pathlib import Path
from typing import Any

import orjson

from ..config import Settings
from ..errors import InputError, NotFoundError
from ..store import Store
from ..transparency import checkpoints, merkle
from ..transparency.leaf import leaf_for
from ..transparency.mirror import Mirror
from ..transparency.note import generate_key
from .options import count, moment, result_key, write_line


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("log", help="the transparency log: checkpoints and proofs",
                                   description=__doc__,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
    verbs = parser.add_subparsers(dest="verb", metavar="VERB", required=True)
    keygen = verbs.add_parser("keygen", help="write a signing key and print its verifier key")
    keygen.add_argument("name", help="the key's (and the log's) name, e.g. rookhaven.example/log")
    keygen.add_argument("--out", type=Path, required=True, help="file to write (must not exist)")
    verbs.add_parser("checkpoint", help="print a signed checkpoint of the log as it is now")
    history = verbs.add_parser("checkpoints", help="export every stored checkpoint")
    history.add_argument("--since", type=moment, help="only those signed at or after (Unix s)")
    prove = verbs.add_parser("prove", help="the inclusion proof of one stored result")
    prove.add_argument("key", type=result_key, help="a result key (sha256:...)")
    prove.add_argument("--checkpoint", type=Path, help="prove against this checkpoint file "
                                                       "(default: the latest stored)")
    between = verbs.add_parser("consistency", help="the consistency proof of two tree sizes")
    between.add_argument("old", help="a tree size or a checkpoint file")
    between.add_argument("new", help="a tree size or a checkpoint file")
    for verb in (prove, between):
        verb.add_argument("--verifier-key", dest="verify_verifier_key", metavar="VKEY",
                          help="check the checkpoint files' signatures with this key "
                               "(NAME+HASH+KEY; default: ROOKHAVEN_VERIFY_VERIFIER_KEY)")
    between.add_argument("--shard", type=count, default=None,
                         help="the log shard whose trees to prove: required on a sharded "
                              "store (`rookhaven store info` says how many it has)")
    verbs.add_parser("backfill", help="log every stored result that has no leaf yet")
    mirror = verbs.add_parser("mirror", help="copy the log to a directory as tlog-tiles files")
    mirror.add_argument("dir", nargs="?", type=Path,
                        help="the mirror's directory (default: ROOKHAVEN_LOG_MIRROR_DIR)")
    parser.set_defaults(run=run)


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def _keygen(args: argparse.Namespace) -> int:
    private, verifier = generate_key(args.name, os.urandom(32))
    try:
        fd = os.open(args.out, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        raise InputError(f"{args.out} exists; choose another file (keys are never "
                         "overwritten)") from None
    except OSError as exc:
        raise InputError(f"cannot create {args.out}: {exc.strerror}") from None
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(private + "\n")
    print(verifier)
    return 0


def _key(settings: Settings) -> str | None:
    if settings.log_key_file is None:
        return None
    return checkpoints.read_private_key(settings.log_key_file)


def _point(raw: str, shard: int, verifier_key: str | None) -> tuple[int, bytes | None]:
    """A tree size from a number, or the size and signed root of shard ``shard``'s tree in
    a checkpoint (or checkpoint set) file, its signature checked with ``verifier_key``."""
    if raw.isascii() and raw.isdigit():
        return int(raw), None
    if not Path(raw).is_file():
        raise InputError(f"{raw} is neither a tree size nor a checkpoint file")
    signed = checkpoints.checked(checkpoints.read_note(Path(raw), "a checkpoint"),
                                 verifier_key)
    if shard >= len(signed.trees):
        raise InputError(f"{raw} signs {len(signed.trees)} tree(s); there is no shard {shard}")
    return signed.trees[shard].size, signed.trees[shard].root


def _signatures(verifier_key: str | None) -> str:
    """What the output says of the checkpoints' signatures."""
    if verifier_key is None:
        return ("not checked: give --verifier-key or ROOKHAVEN_VERIFY_VERIFIER_KEY to check "
                "who signed them")
    return f"verified with {verifier_key.split('+', 1)[0]}'s key"


def _prove(store: Store, args: argparse.Namespace, verifier_key: str | None) -> int:
    note = checkpoints.read_note(args.checkpoint, "a checkpoint") if args.checkpoint else None
    found = checkpoints.inclusion(store, args.key, note, verifier_key)
    write_line(orjson.dumps({**found.as_json(), "signatures": _signatures(verifier_key)},
                            option=orjson.OPT_INDENT_2))
    return 0 if found.verified else 1


def _consistency(store: Store, args: argparse.Namespace, verifier_key: str | None) -> int:
    shard = args.shard or 0
    (old, old_signed), (new, new_signed) = (_point(args.old, shard, verifier_key),
                                            _point(args.new, shard, verifier_key))
    if not 0 < old <= new:
        raise InputError(f"OLD ({old}) must be at least 1 and at most NEW ({new}); give the "
                         "older one first")
    if args.shard is None and store.keys.sharded:
        # One shard's proof says nothing of the others: never let it pass for the log's.
        raise InputError(f"the store's log has {len(store.logs)} shards: name the one to "
                         "prove with --shard N (0 to "
                         f"{len(store.logs) - 1}); `verify --checkpoint FILE` checks them all")
    if not 0 <= shard < len(store.logs):
        raise InputError(f"--shard {shard}: the store has log shards 0 to "
                         f"{len(store.logs) - 1}")
    log = store.logs[shard]
    size = log.integrate()
    if new > size:
        raise NotFoundError(f"the log holds {size} leaves, fewer than {new}")
    # A checkpoint's own signed root, never one recomputed from what the store holds now:
    # the proof must take the root an auditor kept to today's.
    old_root = old_signed if old_signed is not None else log.root(old)
    new_root = new_signed if new_signed is not None else log.root(new)
    proof = log.consistency(old, new) if old < new else []
    verified = (old_root == new_root if old == new
                else merkle.verify_consistency(old, new, old_root, new_root, proof))
    write_line(orjson.dumps({
        "shard": log.shard, "old": old, "new": new, "old_root": _b64(old_root),
        "new_root": _b64(new_root), "proof": [_b64(p) for p in proof],
        "verified": verified, "signatures": _signatures(verifier_key)},
        option=orjson.OPT_INDENT_2))
    return 0 if verified else 1


def _backfill(store: Store) -> int:
    added = 0
    for key in sorted(store.results.keys()):
        if store.log_of(key).index_of(key) is not None:
            continue
        try:
            result, audit = store.results.get(key), store.results.audit(key)
        except NotFoundError:
            continue
        corpus = str(orjson.loads(audit).get("corpus_digest", ""))
        # Logged now, but stamped with when it was stored, where the audit index says.
        stored = store.audits.stored_at(key) or store.now()
        leaf = leaf_for(key, result, audit, corpus, f"{stored:.3f}", backfilled=True)
        added += store.log_of(key).backfill(key, leaf.encode()) == "added"
    print(f"backfilled {added} result(s); the log holds "
          f"{sum(log.size() for log in store.logs)} leaves",
          file=sys.stderr)
    return 0


def run(args: argparse.Namespace, settings: Settings) -> int:
    if args.verb == "keygen":
        return _keygen(args)
    store = Store.from_settings(settings)
    if args.verb == "checkpoint":
        sys.stdout.write(checkpoints.current(store, _key(settings)))
        return 0
    if args.verb == "checkpoints":
        for signed_at, note in store.checkpoints.since(args.since):
            write_line(orjson.dumps({"signed_at": signed_at, "note": note}))
        return 0
    if args.verb == "prove":
        return _prove(store, args, settings.verify_verifier_key)
    if args.verb == "consistency":
        return _consistency(store, args, settings.verify_verifier_key)
    if args.verb == "mirror":
        return _mirror(store, args.dir or settings.log_mirror_dir)
    return _backfill(store)


def _mirror(store: Store, directory: Path | None) -> int:
    if directory is None:
        raise InputError("name the mirror's directory: `rookhaven log mirror DIR`, or set "
                         "ROOKHAVEN_LOG_MIRROR_DIR")
    def progress(done: int, size: int) -> None:
        if size > 100_000 and (done == size or done % 100_000 < 4096):
            print(f"log mirror: {done:,}/{size:,} leaves", file=sys.stderr, flush=True)

    growth = Mirror(directory).update(store, progress=progress)
    kept = ("no signed checkpoint yet" if growth.checkpoint_size is None
            else f"checkpoint of {growth.checkpoint_size} leaves")
    print(f"mirrored {growth.after} leaves to {directory} ({growth.after - growth.before} "
          f"new; {kept})", file=sys.stderr)
    return 0
