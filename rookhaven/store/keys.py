"""The Redis key layout: every key Rookhaven writes, under one configurable prefix.

A store's keys are *flat* (the layout every store had before log shards: one log, no hash
tags) or *sharded*: results, audits, job records and their indexes, ledger and log are
split into a fixed number of log shards, chosen when the store is created and recorded
under ``<prefix>:layout`` (store.layout). Every key of one shard carries that shard's hash
tag, so on a Redis Cluster each job script touches one slot; the keys that are not any
shard's (corpus registry, checkpoints, verification runs) carry the prefix's own tag, and a
corpus's chunks the corpus digest. See docs/adr/0030-log-shards.md.

Content keys (``sha256:<hex>``) are used as they are, so a key read from an audit can be
looked up directly. Celery's own queue keys live under ``<prefix>:celery:`` (see
pipeline.celeryconf), so one prefix scan finds everything.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from redis.crc import REDIS_CLUSTER_HASH_SLOTS, key_slot

# Hashes per log tile key: 2 MiB strings, read and appended in pieces of 32 bytes.
LOG_CHUNK = 1 << 16


def shard_tags(shards: int) -> tuple[str, ...]:
    """One hash tag per shard, shard ``i``'s in the ``i``-th of ``shards`` equal slot ranges.

    A cluster's primaries own contiguous slot ranges, so shards spread over them as evenly
    as the slots do. The tags are recorded in the store's layout when it is created: this
    rule only ever makes new stores.
    """
    tags = []
    for i in range(shards):
        low, high = (i * REDIS_CLUSTER_HASH_SLOTS // shards,
                     (i + 1) * REDIS_CLUSTER_HASH_SLOTS // shards)
        n = 0
        while not low <= key_slot(f"s{i}.{n}".encode()) < high:
            n += 1
        tags.append(f"s{i}.{n}")
    return tuple(tags)


@dataclass(frozen=True)
class ShardKeys:
    """The keys of one log shard (a store's only shard when flat)."""

    base: str  # "<prefix>" when flat, "<prefix>:{<tag>}" when sharded
    index: int

    def job(self, job_id: str) -> str:
        """Hash: one job record of form 1, an earlier release's (read only by its migration,
        store.migration)."""
        return f"{self.base}:job:{job_id}"

    @property
    def job_specs(self) -> str:
        """Hash: job id -> its spec (canonical JSON: request, corpus, provider, params),
        written once when the job is recorded."""
        return f"{self.base}:jobs:spec"

    @property
    def job_states(self) -> str:
        """Hash: job id -> its mutable state as one string (store.scripts, _PRELUDE)."""
        return f"{self.base}:jobs:state"

    @property
    def job_errors(self) -> str:
        """Hash: job id -> the error that failed (or is retrying) it."""
        return f"{self.base}:jobs:error"

    @property
    def job_askers(self) -> str:
        """Hash: job id -> the names of the MCP tokens that submitted it, comma-separated
        in the order each first did (a token's name holds no comma: server.tokens). A job
        submitted only by the CLI or a run has none."""
        return f"{self.base}:jobs:askers"

    def receipt(self, token: str) -> str:
        """String: set with a chunk's results by one MSETNX, so the script that follows
        can tell whether that MSETNX wrote them (store.scripts.COMPLETE)."""
        return f"{self.base}:receipt:{token}"

    def result(self, key: str) -> str:
        """String: canonical bytes of a RetrievalResult, write-once."""
        return f"{self.base}:result:{key}"

    def audit(self, key: str) -> str:
        """String: the copy of a result's Audit that releases before ADR 0064 stored beside
        the result framing it (today's read the audit from the result, and write none)."""
        return f"{self.base}:audit:{key}"

    @property
    def jobs_queued(self) -> str:
        """Sorted set: queued job id -> when it was last enqueued."""
        return f"{self.base}:jobs:queued"

    @property
    def jobs_running(self) -> str:
        """Sorted set: running job id -> when its current run started."""
        return f"{self.base}:jobs:running"

    @property
    def jobs_delivered(self) -> str:
        """Sorted set: queued job id -> when a worker received its message (not yet started)."""
        return f"{self.base}:jobs:delivered"

    @property
    def primary_seen(self) -> str:
        """String: the replication id of the primary that served this shard at the last
        sweep; another id now means a failover (or a restart, or a reshard) came between."""
        return f"{self.base}:primary-seen"

    @property
    def primary_claim(self) -> str:
        """String, expiring: the token of the sweep handing this shard's open jobs back
        after its primary changed, so that two sweeps never both do it."""
        return f"{self.base}:primary-claim"

    @property
    def ledger(self) -> str:
        """Stream: every state change of this shard's jobs (job, event, at, detail)."""
        return f"{self.base}:ledger"

    @property
    def violations(self) -> str:
        """Stream: every attempt to store different bytes under an existing content key."""
        return f"{self.base}:violations"

    @property
    def counters(self) -> str:
        """Hash: counters the job scripts keep (job events, results stored, violations)."""
        return f"{self.base}:counters"

    @property
    def audits_by_time(self) -> str:
        """Sorted set: result key -> when its audit was first stored."""
        return f"{self.base}:audits:by-time"

    def audits_by_corpus(self, digest: str) -> str:
        """Sorted set: result key -> stored time, for the audits made over ``digest``."""
        return f"{self.base}:audits:by-corpus:{digest}"

    @property
    def log_leaves(self) -> str:
        """List: the shard's log leaves (transparency.leaf), in log order; index = leaf
        index."""
        return f"{self.base}:log:leaves"

    @property
    def log_index(self) -> str:
        """Hash: result key -> its leaf index."""
        return f"{self.base}:log:index"

    def log_hashes(self, level: int, chunk: int) -> str:
        """String: the 32-byte hashes of the complete subtrees at ``level``, nodes
        ``chunk * LOG_CHUNK`` onwards, concatenated (a tile of the Merkle tree)."""
        return f"{self.base}:log:hashes:{level}:{chunk}"


@dataclass(frozen=True)
class Keys:
    """Key names for one prefix and layout: flat (``tags`` None) or one tag per shard;
    ``jobs_form`` 2 keeps job records as fields of per-shard hashes, 1 (stores made before)
    as one hash per job."""

    prefix: str
    tags: tuple[str, ...] | None = None
    jobs_form: int = 2
    _shards: tuple[ShardKeys, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        bases = ([self.prefix] if self.tags is None
                 else [f"{self.prefix}:{{{tag}}}" for tag in self.tags])
        object.__setattr__(self, "_shards",
                           tuple(ShardKeys(base, i) for i, base in enumerate(bases)))

    @property
    def sharded(self) -> bool:
        """Whether keys carry hash tags (a store a Redis Cluster can hold)."""
        return self.tags is not None

    @property
    def shards(self) -> tuple[ShardKeys, ...]:
        """Every shard's keys, in shard order."""
        return self._shards

    def shard_of(self, key: str) -> int:
        """The shard of result (and job) ``key``: fixed by the key alone."""
        if len(self._shards) == 1:
            return 0
        digest = hashlib.sha256(key.encode()).digest()
        return int.from_bytes(digest[:8], "big") % len(self._shards)

    def shard(self, key: str) -> ShardKeys:
        """The keys of the shard that holds result ``key``."""
        return self._shards[self.shard_of(key)]

    def result(self, key: str) -> str:
        """String: canonical bytes of a RetrievalResult, write-once."""
        return self.shard(key).result(key)

    def audit(self, key: str) -> str:
        """String: an earlier release's copy of that result's Audit (ShardKeys.audit)."""
        return self.shard(key).audit(key)

    def pattern(self, kind: str) -> str:
        """A SCAN pattern matching every shard's ``kind`` keys ("result", "job")."""
        return f"{self.prefix}:{kind}:*" if self.tags is None else f"{self.prefix}:{{*}}:{kind}:*"

    @property
    def _global(self) -> str:
        # One slot for the keys a MULTI writes together outside any shard.
        return self.prefix if self.tags is None else f"{self.prefix}:{{{self.prefix}}}"

    @property
    def layout(self) -> str:
        """String: the store's layout (store.layout), written once when it is created."""
        return f"{self.prefix}:layout"

    def corpus_meta(self, digest: str) -> str:
        """Hash: documents, bytes, chunks, stored_at; written last, so it marks completeness."""
        return f"{self._corpus(digest)}:meta"

    def corpus_chunk(self, digest: str, index: int) -> str:
        """String: canonical JSON lines, piece ``index`` of the corpus."""
        return f"{self._corpus(digest)}:chunk:{index}"

    def _corpus(self, digest: str) -> str:
        return f"{self.prefix}:corpus:" + (digest if self.tags is None else f"{{{digest}}}")

    @property
    def corpora(self) -> str:
        """Sorted set: corpus digest -> when it was first stored."""
        return f"{self._global}:corpora"

    @property
    def corpus_names(self) -> str:
        """Sorted set: corpus name -> when it was first used."""
        return f"{self._global}:corpus-names"

    def corpus_name(self, name: str) -> str:
        """Sorted set: digests registered under ``name`` -> when each was registered."""
        return f"{self._global}:corpus-name:{name}"

    @property
    def replication_probe(self) -> str:
        """Counter: written before each WAIT, so the WAIT covers every earlier write."""
        return f"{self.prefix}:replication-probe"

    @property
    def counters(self) -> str:
        """Hash: counters kept outside the job scripts (verifications, rejected messages);
        a flat store's one counters hash."""
        return f"{self._global}:counters"

    @property
    def rejected(self) -> str:
        """Stream: broker messages no task could run (dropped, never executed), with why."""
        return f"{self._global}:rejected-messages"

    def token_jobs(self, name: str) -> str:
        """Sorted set: jobs the MCP token ``name`` submitted, open when last counted ->
        when submitted (store.askers)."""
        return f"{self._global}:token-jobs:{name}"

    @property
    def verifications(self) -> str:
        """Sorted set: verification run id -> when it started."""
        return f"{self._global}:verifications"

    def verification(self, run_id: str) -> str:
        """String: one verification run's record (canonical JSON)."""
        return f"{self._global}:verification:{run_id}"

    @property
    def alerts(self) -> str:
        """Stream: every verification alarm (run, key, outcome, where)."""
        return f"{self._global}:alerts"

    def rerank(self, run_id: str) -> str:
        """Hash: a re-ranking run's spec, total, chunk count and summary."""
        return f"{self.prefix}:rerank:{run_id}"

    @property
    def reranks_made(self) -> str:
        """Set: result keys a re-ranking run made and nobody else has asked for since, which
        are not history to re-rank again."""
        return f"{self._global}:reranks:made"

    def rerank_chunks(self, run_id: str) -> str:
        """Hash: chunk index -> that chunk's report rows (JSON lines), once it finished."""
        return f"{self.prefix}:rerank:{run_id}:chunks"

    @property
    def log_checkpoints(self) -> str:
        """Sorted set: signed checkpoint notes (of every shard, when sharded) -> when each
        was signed (the signed history)."""
        return f"{self._global}:log:checkpoints"

    def worker(self, instance: str) -> str:
        """String with a TTL: present while the worker instance is alive."""
        return f"{self.prefix}:worker:{instance}"

    @property
    def celery(self) -> str:
        """Prefix kombu puts before its own keys (queues, unacked messages)."""
        return f"{self.prefix}:celery:"
