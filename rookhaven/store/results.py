"""Results, write-once under their content keys, and the audit records they frame.

A result's bytes frame its audit's (core.canonical.result_bytes), so the audit is stored
once, inside its result, and read from it (ADR 0064). Storing a result is also how its job
finishes: a chunk's results go in with one MSETNX (only if none of their keys exists) and,
in the same MULTI/EXEC, one script (store.scripts.COMPLETE) appends their leaves to the
transparency log (store.log), indexes the audits and marks the jobs done. Where a key
exists, each is written if absent and compared: different bytes under an existing key are
refused, recorded in the violations stream, logged and raised; nothing is ever overwritten.
"""

from __future__ import annotations

import functools
import logging
import secrets
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from ..core.canonical import audit_of, embeds
from ..errors import IntegrityError, NotFoundError
from ..transparency.leaf import LeafFrame, leaf_for
from ..transparency.merkle import leaf_hash
from .ahead import Ahead
from .connection import translated
from .context import StoreContext, text
from .keys import LOG_CHUNK, ShardKeys
from .rounds import Item, Reply, Round
from .scripts import MAX_JOBS

log = logging.getLogger("rookhaven.store")


@dataclass(frozen=True)
class Offered:
    """A result and its audit offered for storage under ``key``, computed over ``corpus``;
    ``engine``: the audit's engine, where the caller knows it (else it is read from the
    audit, for the log leaf)."""

    key: str
    corpus: str
    result: bytes
    audit: bytes
    engine: dict[str, Any] | None = None


class ResultStore:
    """Content-addressed results, each framing its audit."""

    def __init__(self, ctx: StoreContext) -> None:
        self._ctx = ctx

    def put(self, key: str, corpus_digest: str, result: bytes, audit: bytes) -> str:
        """Store the canonical ``result`` and ``audit`` bytes under ``key`` if absent.

        Returns 'done' (and the job ``key`` moved to done), 'already-done' or 'stored'
        (no job). Raises IntegrityError if either key already holds different bytes.
        """
        round_ = Round(self._ctx)
        reply = self.queue_put(round_, [Offered(key, corpus_digest, result, audit)])[0]
        round_.send(f"storing result {key}")
        return reply.get()

    def queue_put(self, round_: Round, offered: Sequence[Offered]) -> list[Reply[str]]:
        """``put`` for each of ``offered``, queued on ``round_``: per shard and corpus, one
        MSETNX of the results and one script that logs and closes their jobs
        (store.scripts.COMPLETE). A reply per result; its IntegrityError is raised by
        ``Reply.get``, or at once (nothing queued) if a result does not embed its audit."""
        for item in offered:
            if not embeds(item.result, item.audit):
                # Both copies come from one encoding (core.canonical.result_bytes); a pair
                # that disagrees was assembled from two computations and must never be stored.
                raise IntegrityError(
                    f"the result offered under {item.key} does not embed the audit offered "
                    "with it; nothing was stored. Store the bytes "
                    "core.canonical.result_bytes gives")
        ctx = self._ctx
        # A key offered again goes to a chunk of its own, after the first: one MSETNX would
        # keep its last bytes unchecked, a chunk after it compares them.
        groups: dict[tuple[int, str, int], list[int]] = {}
        copies: dict[str, int] = {}
        for at, item in enumerate(offered):
            nth = copies[item.key] = copies.get(item.key, -1) + 1
            groups.setdefault((ctx.keys.shard_of(item.key), item.corpus, nth), []).append(at)
        replies: list[Reply[str] | None] = [None] * len(offered)
        now = ctx.now()
        for (shard, _, _), positions in groups.items():
            for piece in range(0, len(positions), MAX_JOBS):
                where = positions[piece: piece + MAX_JOBS]
                chunk = _Chunk(ctx, ctx.keys.shards[shard], [offered[at] for at in where], now)
                whole = chunk.queue(round_)
                for index, at in enumerate(where):
                    replies[at] = Item(whole, index, functools.partial(
                        _stored, offered[at].key, offered[at].corpus))
        return [reply for reply in replies if reply is not None]

    def exists(self, key: str) -> bool:
        """Whether a result is stored under ``key``."""
        with translated(self._ctx.client, f"looking up result {key}"):
            return bool(self._ctx.client.exists(self._ctx.keys.result(key)))

    def count(self, keys: Sequence[str]) -> int:
        """How many of ``keys`` have a result stored (a key named twice counts twice): one
        EXISTS, one a slot on a cluster, and an integer back, so a poll costs the poller
        almost nothing."""
        if not keys:
            return 0
        with translated(self._ctx.client, f"counting {len(keys)} results"):
            return int(self._ctx.client.exists(*[self._ctx.keys.result(k) for k in keys]))

    def held(self, key: str) -> bool:
        """Whether a result or an audit is stored under ``key``."""
        keys = self._ctx.keys
        with translated(self._ctx.client, f"looking up result {key}"):
            return bool(self._ctx.client.exists(keys.result(key), keys.audit(key)))

    def get(self, key: str) -> bytes:
        """The canonical result bytes under ``key``, or NotFoundError."""
        return self._read(self._ctx.keys.result(key), key, "result")

    def audit(self, key: str) -> bytes:
        """The canonical audit bytes the result under ``key`` frames, or NotFoundError;
        IntegrityError if the bytes stored there frame none."""
        return _audit(key, self.get(key))

    def keys(self) -> Iterator[str]:
        """Every result key stored, whatever any index says (a full scan of the prefix)."""
        with translated(self._ctx.client, "scanning stored results"):
            for found in self._ctx.client.scan_iter(match=self._ctx.keys.pattern("result"),
                                                    count=1000):
                yield text(found).split(":result:", 1)[1]

    def get_many(self, keys: list[str]) -> list[bytes | None]:
        """Result bytes for each key (None where absent), in one round trip."""
        if not keys:
            return []
        with translated(self._ctx.client, f"reading {len(keys)} results"):
            values = self._ctx.get_many([self._ctx.keys.result(k) for k in keys])
        return [bytes(v) if v is not None else None for v in values]

    def audit_many(self, keys: list[str]) -> list[bytes | None]:
        """Audit bytes for each key (None where no result frames one), in one round trip."""
        return audits_in(self.get_many(keys))

    def read_ahead(self, keys: list[str]) -> Ahead:
        """The results of ``keys`` (as ``get_many`` gives them), asked for now;
        ``replies()`` reads them (store.ahead)."""
        k = self._ctx.keys
        return Ahead(self._ctx.client, [("MGET", *[k.result(key) for key in keys])],
                     lambda: [self.get_many(keys)], f"reading {len(keys)} results")

    def _read(self, redis_key: str, key: str, what: str) -> bytes:
        with translated(self._ctx.client, f"reading {what} {key}"):
            value = self._ctx.client.get(redis_key)
        if value is None:
            raise NotFoundError(f"no {what} stored under {key!r}; a job's result appears "
                                "when its state is done (`rookhaven job KEY`)")
        return bytes(value)


class _Chunk:
    """Results of one shard and corpus, stored together: an MSETNX and COMPLETE in the
    caller's round; if the MSETNX refused (a key existed), key by key, compared, later."""

    def __init__(self, ctx: StoreContext, shard: ShardKeys, items: list[Offered],
                 now: str) -> None:
        self._ctx, self._shard, self._items, self._now = ctx, shard, items, now
        self._leaves: list[tuple[str, bytes, bytes]] = []
        frames: dict[bytes, LeafFrame] = {}  # by engine: a chunk shares corpus and time
        for item in items:
            if item.engine is None:
                leaf = leaf_for(item.key, item.result, item.audit, item.corpus, now).encode()
            else:
                engine = orjson.dumps(item.engine, option=orjson.OPT_SORT_KEYS)
                frame = frames.get(engine)
                if frame is None:
                    frame = frames[engine] = LeafFrame(item.corpus, item.engine, now)
                leaf = frame.encode(item.key, item.result, item.audit)
            self._leaves.append((item.key, leaf, leaf_hash(leaf)))
        self._outcomes: list[str] | None = None

    def queue(self, round_: Round) -> Reply[list[str]]:
        """Queue the MSETNX and the script; the reply gives each item's outcome."""
        k, receipt = self._shard, self._shard.receipt(secrets.token_hex(8))
        pairs: list[Any] = []
        for item in self._items:
            pairs += [k.result(item.key), item.result]
        pairs += [receipt, b"1"]
        # One transaction: no reader, replica or AOF holds the results without their leaves.
        with round_.together():
            round_.command("MSETNX", pairs[0::2], pairs, int)
            # A chunk never holds a key twice (ResultStore.queue_put): every item is a result.
            return round_.call(self._ctx.complete, self._keys(receipt),
                               self._args("receipt", len(self._items), self._leaves),
                               self._settled)

    def _keys(self, receipt: str) -> list[str]:
        k = self._shard
        return [*self._ctx.job_keys(k), k.audits_by_time,
                k.audits_by_corpus(self._items[0].corpus), k.log_leaves, receipt]

    def _args(self, mode: str, stored: int, leaves: list[tuple[str, bytes, bytes]]) -> list[Any]:
        return [*self._ctx.job_args(self._now), self._shard.log_hashes(0, 0)[:-1], LOG_CHUNK,
                mode, stored, *(part for leaf in leaves for part in leaf)]

    def _settled(self, answer: Any) -> list[str]:
        if self._outcomes is None:
            self._outcomes = ([text(a) for a in answer] if text(answer[0]) != "refused"
                              else self._one_by_one())
        return self._outcomes

    def _one_by_one(self) -> list[str]:
        """Each key written if absent and a present one compared (store.scripts.PUT): the
        equal results' jobs closed as COMPLETE would, a differing one recorded as a
        violation (its job failed)."""
        ctx, k, items = self._ctx, self._shard, self._items
        with translated(ctx.client, f"storing {len(items)} result(s) one by one"):
            round_ = Round(ctx)
            puts = [round_.call(ctx.put, [k.result(item.key)], [item.result], text)
                    for item in items]
            round_.send(f"storing {len(items)} result(s) one by one")
            verdicts = [put.get() for put in puts]
            outcomes = list(verdicts)
            for at, verdict in enumerate(verdicts):
                if verdict.startswith("violation:"):
                    item = items[at]
                    outcomes[at] = text(ctx.violation(
                        keys=[*ctx.job_keys(k), k.violations],
                        args=[*ctx.job_args(self._now), item.key, item.key,
                              verdict.removeprefix("violation:")]))
            equal = [at for at, verdict in enumerate(verdicts)
                     if not verdict.startswith("violation:")]
            if equal:
                stored = sum(verdicts[at] == "stored" for at in equal)
                answer = ctx.complete(keys=self._keys(k.receipt("checked")), args=self._args(
                    "checked", stored, [self._leaves[at] for at in equal]))
                for at, outcome in zip(equal, answer, strict=True):
                    outcomes[at] = text(outcome)
        return outcomes


def audits_in(results: list[bytes | None]) -> list[bytes | None]:
    """The audit each result frames (None where there is no result, or it frames none)."""
    return [None if result is None else audit_of(result) for result in results]


def _audit(key: str, result: bytes) -> bytes:
    audit = audit_of(result)
    if audit is None:
        raise IntegrityError(f"the bytes stored under {key} are not a result Rookhaven wrote "
                             f"(no audit in them); run `rookhaven verify --key {key}`")
    return audit


def _stored(key: str, corpus_digest: str, answer: Any) -> str:
    reply = text(answer)
    if reply.startswith("violation:"):
        what = reply.removeprefix("violation:")
        log.error("integrity violation: different %s bytes offered under %s", what, key,
                  extra={"key": key, "what": what, "corpus": corpus_digest})
        raise IntegrityError(
            f"different {what} bytes were offered under {key}; the stored bytes were kept. "
            "The same request, corpus and engine gave another answer: check the engine "
            "version and run `rookhaven verify --key` on it"
        )
    return reply
