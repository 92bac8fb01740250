"""The transparency log in Redis: leaves in log order, Merkle tiles, signed checkpoints.

Leaves are appended by the script that stores a result (store.scripts.COMPLETE), so the log
is sequenced by Redis itself: one order, whatever the number of workers. Level 0 of the
tree (the leaf hashes) is written by that same script; the levels above hold the hashes of
complete subtrees and are filled in by ``integrate``, which anyone may run at any time:
each piece is appended only at the offset it belongs to, so concurrent integrators write
the same bytes once. A proof for any tree size reads O(log n) hashes (transparency.merkle).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from ..errors import NotFoundError, RookhavenError
from ..transparency import merkle
from .connection import translated
from .context import StoreContext
from .keys import LOG_CHUNK

HASH = 32
# Parents computed per round trip while integrating: bounds memory (2 MiB of children).
_BATCH = LOG_CHUNK // 2

# KEYS[1] = a tile; ARGV[1] = the byte offset the piece belongs at, ARGV[2] = the piece.
# Appends only when the tile ends exactly there: 1 if appended, 0 if someone else did.
_APPEND_AT = """
if redis.call('STRLEN', KEYS[1]) ~= tonumber(ARGV[1]) then return 0 end
redis.call('APPEND', KEYS[1], ARGV[2])
return 1
"""

# KEYS = result, log leaves, log index; ARGV = result key, leaf, leaf hash, level-0
# tile prefix, hashes per tile. Logs a stored result that has no leaf yet (written before
# the log existed): 'added', 'logged' (it had one) or 'missing' (no such result).
_BACKFILL = """
if redis.call('EXISTS', KEYS[1]) == 0 then return 'missing' end
if redis.call('HEXISTS', KEYS[3], ARGV[1]) == 1 then return 'logged' end
local n = redis.call('RPUSH', KEYS[2], ARGV[2]) - 1
redis.call('HSET', KEYS[3], ARGV[1], n)
redis.call('APPEND', ARGV[4] .. math.floor(n / tonumber(ARGV[5])), ARGV[3])
return 'added'
"""


class TransparencyLog:
    """The append-only Merkle log of every stored result."""

    def __init__(self, ctx: StoreContext, shard: int = 0) -> None:
        self._ctx = ctx
        self.shard = shard
        self.sharded = ctx.keys.sharded  # one of several shards' logs (store.keys)
        self._keys = ctx.keys.shards[shard]
        self._append_at = ctx.client.register_script(_APPEND_AT)
        self._backfill = ctx.client.register_script(_BACKFILL)

    # ----- leaves ---------------------------------------------------------------------

    def size(self) -> int:
        """How many leaves the log holds."""
        with translated(self._ctx.client, "reading the log size"):
            return int(self._ctx.client.llen(self._keys.log_leaves))

    def index_of(self, key: str) -> int | None:
        """The leaf index of result ``key``, or None if it was never logged."""
        with translated(self._ctx.client, f"looking up the leaf of {key}"):
            found = self._ctx.client.hget(self._keys.log_index, key)
        return None if found is None else int(found)

    def logged(self, keys: Sequence[str]) -> list[bool]:
        """For each result key, whether the log holds a leaf for it: an index entry that
        points inside the log (a truncation leaves entries pointing past its end)."""
        if not keys:
            return []
        with translated(self._ctx.client, f"looking up {len(keys)} leaves"):
            pipe = self._ctx.client.pipeline(transaction=False)
            pipe.llen(self._keys.log_leaves)
            pipe.hmget(self._keys.log_index, list(keys))
            size, found = pipe.execute()
        return [f is not None and int(f) < int(size) for f in found]

    def leaves(self, start: int = 0, stop: int | None = None,
               page: int = 1000) -> Iterator[tuple[int, bytes]]:
        """(index, leaf bytes) from ``start`` up to ``stop`` (default: the end), in order."""
        stop = self.size() if stop is None else stop
        for at in range(start, stop, page):
            with translated(self._ctx.client, "reading log leaves"):
                found = self._ctx.client.lrange(self._keys.log_leaves, at,
                                                min(at + page, stop) - 1)
            for offset, data in enumerate(found):
                yield at + offset, bytes(data)

    def leaf_hashes(self, start: int, stop: int) -> bytes:
        """The level-0 hashes of leaves ``[start, stop)``, concatenated."""
        return self._read_range(0, start, stop)

    def hashes(self, level: int, start: int, stop: int) -> bytes:
        """The hashes of complete subtrees ``start`` to ``stop`` of ``level``, concatenated
        (as many as the log holds: integrate first)."""
        return self._read_range(level, start, stop)

    def backfill(self, key: str, leaf: bytes) -> str:
        """Append ``leaf`` for stored result ``key`` unless it has one: see _BACKFILL."""
        k = self._keys
        with translated(self._ctx.client, f"logging result {key}"):
            reply = self._backfill(
                keys=[k.result(key), k.log_leaves, k.log_index],
                args=[key, leaf, merkle.leaf_hash(leaf), k.log_hashes(0, 0)[:-1], LOG_CHUNK])
        return reply.decode() if isinstance(reply, bytes) else str(reply)

    # ----- the tree -------------------------------------------------------------------

    def integrate(self) -> int:
        """Fill in every complete-subtree hash the leaves make possible; the tree size."""
        for _ in range(8):  # a concurrent integrator only means re-reading where it got
            size = self.size()
            if self._integrate(size):
                return size
        raise RookhavenError("the log kept changing while it was integrated; try again")

    def _integrate(self, size: int) -> bool:
        level = 1
        while size >> level:
            target = size >> level
            have = self._count(level)
            while have < target:
                upto = min(target, have + _BATCH)
                children = self._read_range(level - 1, 2 * have, 2 * upto)
                if len(children) != 2 * HASH * (upto - have):
                    return False  # the level below is not there yet
                parents = b"".join(
                    merkle.node_hash(children[i:i + HASH], children[i + HASH:i + 2 * HASH])
                    for i in range(0, len(children), 2 * HASH))
                if not self._write_range(level, have, parents):
                    return False
                have = upto
            level += 1
        return True

    def _count(self, level: int) -> int:
        """How many complete-subtree hashes ``level`` holds."""
        count, chunk = 0, 0
        with translated(self._ctx.client, "reading the log's tiles"):
            while True:
                length = int(self._ctx.client.strlen(self._keys.log_hashes(level, chunk)))
                count += length // HASH
                if length < LOG_CHUNK * HASH:
                    return count
                chunk += 1

    def _read_range(self, level: int, start: int, stop: int) -> bytes:
        pieces: list[bytes] = []
        with translated(self._ctx.client, "reading the log's tiles"):
            pipe = self._ctx.client.pipeline(transaction=False)
            for chunk, lo, hi in _pieces(start, stop):
                pipe.getrange(self._keys.log_hashes(level, chunk), lo * HASH, hi * HASH - 1)
            pieces = pipe.execute() if stop > start else []
        return b"".join(bytes(p) for p in pieces)

    def _write_range(self, level: int, start: int, data: bytes) -> bool:
        at = 0
        with translated(self._ctx.client, "writing the log's tiles"):
            for chunk, lo, hi in _pieces(start, start + len(data) // HASH):
                piece = data[at:at + (hi - lo) * HASH]
                at += len(piece)
                appended = self._append_at(keys=[self._keys.log_hashes(level, chunk)],
                                           args=[lo * HASH, piece])
                if not appended:
                    return False
        return True

    def nodes(self, wanted: Sequence[tuple[int, int]]) -> dict[tuple[int, int], bytes]:
        """The hashes of complete subtrees ``(level, index)``, in one round trip."""
        with translated(self._ctx.client, "reading log hashes"):
            pipe = self._ctx.client.pipeline(transaction=False)
            for level, index in wanted:
                chunk, offset = divmod(index, LOG_CHUNK)
                pipe.getrange(self._keys.log_hashes(level, chunk), offset * HASH,
                              offset * HASH + HASH - 1)
            found = pipe.execute() if wanted else []
        out = {node: bytes(h) for node, h in zip(wanted, found, strict=True)}
        missing = [node for node, h in out.items() if len(h) != HASH]
        if missing:
            raise NotFoundError(f"the log has no hash for subtree(s) {missing[:3]}: run "
                                "`rookhaven log checkpoint` to integrate it, or the log was "
                                "truncated")
        return out

    def root(self, size: int) -> bytes:
        """The Merkle tree hash of the first ``size`` leaves."""
        if size == 0:
            return merkle.EMPTY_ROOT
        return merkle.root(size, self.nodes(merkle.root_nodes(size)))

    def inclusion(self, index: int, size: int) -> list[bytes]:
        """The inclusion proof of leaf ``index`` in the tree of ``size`` leaves."""
        return merkle.inclusion_proof(index, size,
                                      self.nodes(merkle.inclusion_nodes(index, size)))

    def consistency(self, old: int, new: int) -> list[bytes]:
        """The consistency proof from the tree of ``old`` leaves to that of ``new``."""
        return merkle.consistency_proof(old, new, self.nodes(merkle.consistency_nodes(old, new)))


class CheckpointHistory:
    """Every signed checkpoint (or checkpoint set, when the log is sharded), kept in Redis."""

    def __init__(self, ctx: StoreContext) -> None:
        self._ctx = ctx

    def add(self, note: str, at: float) -> None:
        """Keep a signed ``note`` (signed at ``at``) in the history."""
        with translated(self._ctx.client, "storing a checkpoint"):
            self._ctx.client.zadd(self._ctx.keys.log_checkpoints, {note: at}, nx=True)

    def since(self, since: float | None = None) -> list[tuple[float, str]]:
        """(signed at, note) of every stored checkpoint since ``since``, oldest first."""
        with translated(self._ctx.client, "reading checkpoints"):
            found = self._ctx.client.zrangebyscore(
                self._ctx.keys.log_checkpoints, "-inf" if since is None else since, "+inf",
                withscores=True)
        return [(float(score), note.decode()) for note, score in found]


def _pieces(start: int, stop: int) -> Iterator[tuple[int, int, int]]:
    """(tile, first, end) offsets within tiles covering nodes ``[start, stop)``."""
    at = start
    while at < stop:
        chunk, lo = divmod(at, LOG_CHUNK)
        hi = min(LOG_CHUNK, lo + stop - at)
        yield chunk, lo, hi
        at += hi - lo
