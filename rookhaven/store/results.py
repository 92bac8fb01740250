"""Results and audit records, write-once under their content keys.

Storing a result is also how its job finishes: one script (store.scripts.COMPLETE) checks
both keys, writes whatever is absent, appends the result's leaf to the transparency log
(store.log), indexes the audit and marks the job done. Different
bytes under an existing key are refused, recorded in the violations stream, logged and
raised; nothing is ever overwritten.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Iterator
from typing import Any

from ..core.canonical import embeds
from ..errors import IntegrityError, NotFoundError
from ..transparency.leaf import leaf_for
from ..transparency.merkle import leaf_hash
from .connection import translated
from .context import StoreContext, text
from .keys import LOG_CHUNK
from .rounds import Reply, Round

log = logging.getLogger("rookhaven.store")


class ResultStore:
    """Content-addressed results and audits."""

    def __init__(self, ctx: StoreContext) -> None:
        self._ctx = ctx

    def put(self, key: str, corpus_digest: str, result: bytes, audit: bytes) -> str:
        """Store the canonical ``result`` and ``audit`` bytes under ``key`` if absent.

        Returns 'done' (and the job ``key`` moved to done), 'already-done' or 'stored'
        (no job). Raises IntegrityError if either key already holds different bytes.
        """
        round_ = Round(self._ctx)
        reply = self.queue_put(round_, key, corpus_digest, result, audit)
        round_.send(f"storing result {key}")
        return reply.get()

    def queue_put(self, round_: Round, key: str, corpus_digest: str, result: bytes,
                  audit: bytes) -> Reply[str]:
        """``put``, queued on ``round_``; its IntegrityError is raised by ``Reply.get``, or
        at once (nothing queued) if ``result`` does not embed ``audit``."""
        if not embeds(result, audit):
            # Both copies come from one encoding (core.canonical.result_bytes); a pair that
            # disagrees was assembled from two computations and must never be stored.
            raise IntegrityError(
                f"the result offered under {key} does not embed the audit offered with it; "
                "nothing was stored. Store the bytes core.canonical.result_bytes gives")
        ctx, k = self._ctx, self._ctx.shard(key)
        keys = [*ctx.job_keys(key), k.audit(key), k.audits_by_time,
                k.audits_by_corpus(corpus_digest), k.violations, k.log_leaves, k.log_index]
        now = ctx.now()
        leaf = leaf_for(key, result, audit, corpus_digest, now).encode()
        return round_.call(ctx.complete, keys, [
            *ctx.job_args(now, key), result, audit, key, leaf, leaf_hash(leaf),
            k.log_hashes(0, 0)[:-1], LOG_CHUNK], functools.partial(_stored, key, corpus_digest))

    def exists(self, key: str) -> bool:
        """Whether a result is stored under ``key``."""
        with translated(self._ctx.client, f"looking up result {key}"):
            return bool(self._ctx.client.exists(self._ctx.keys.result(key)))

    def get(self, key: str) -> bytes:
        """The canonical result bytes under ``key``, or NotFoundError."""
        return self._read(self._ctx.keys.result(key), key, "result")

    def audit(self, key: str) -> bytes:
        """The canonical audit bytes under ``key``, or NotFoundError."""
        return self._read(self._ctx.keys.audit(key), key, "audit")

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
        """Audit bytes for each key (None where absent), in one round trip."""
        if not keys:
            return []
        with translated(self._ctx.client, f"reading {len(keys)} audits"):
            values = self._ctx.get_many([self._ctx.keys.audit(k) for k in keys])
        return [bytes(v) if v is not None else None for v in values]

    def _read(self, redis_key: str, key: str, what: str) -> bytes:
        with translated(self._ctx.client, f"reading {what} {key}"):
            value = self._ctx.client.get(redis_key)
        if value is None:
            raise NotFoundError(f"no {what} stored under {key!r}; a job's result appears "
                                "when its state is done (`rookhaven job KEY`)")
        return bytes(value)


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
