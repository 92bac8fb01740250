"""The Redis key layout: every key Rookhaven writes, under one configurable prefix.

Content keys (``sha256:<hex>``) are used as they are, so a key read from an audit can be
looked up directly. Celery's own queue keys live under ``<prefix>:celery:`` (see
pipeline.celeryconf), so one prefix scan finds everything.
"""

from __future__ import annotations

from dataclasses import dataclass

# Hashes per log tile key: 2 MiB strings, read and appended in pieces of 32 bytes.
LOG_CHUNK = 1 << 16


@dataclass(frozen=True)
class Keys:
    """Key names for one prefix."""

    prefix: str

    def corpus_meta(self, digest: str) -> str:
        """Hash: documents, bytes, chunks, stored_at; written last, so it marks completeness."""
        return f"{self.prefix}:corpus:{digest}:meta"

    def corpus_chunk(self, digest: str, index: int) -> str:
        """String: canonical JSON lines, piece ``index`` of the corpus."""
        return f"{self.prefix}:corpus:{digest}:chunk:{index}"

    @property
    def corpora(self) -> str:
        """Sorted set: corpus digest -> when it was first stored."""
        return f"{self.prefix}:corpora"

    @property
    def corpus_names(self) -> str:
        """Sorted set: corpus name -> when it was first used."""
        return f"{self.prefix}:corpus-names"

    def corpus_name(self, name: str) -> str:
        """Sorted set: digests registered under ``name`` -> when each was registered."""
        return f"{self.prefix}:corpus-name:{name}"

    @property
    def replication_probe(self) -> str:
        """Counter: written before each WAIT, so the WAIT covers every earlier write."""
        return f"{self.prefix}:replication-probe"

    def result(self, key: str) -> str:
        """String: canonical bytes of a RetrievalResult, write-once."""
        return f"{self.prefix}:result:{key}"

    def audit(self, key: str) -> str:
        """String: canonical bytes of that result's Audit, write-once."""
        return f"{self.prefix}:audit:{key}"

    @property
    def audits_by_time(self) -> str:
        """Sorted set: result key -> when its audit was first stored."""
        return f"{self.prefix}:audits:by-time"

    def audits_by_corpus(self, digest: str) -> str:
        """Sorted set: result key -> stored time, for the audits made over ``digest``."""
        return f"{self.prefix}:audits:by-corpus:{digest}"

    def job(self, job_id: str) -> str:
        """Hash: one job record (see store.records.JobRecord)."""
        return f"{self.prefix}:job:{job_id}"

    @property
    def jobs_queued(self) -> str:
        """Sorted set: queued job id -> when it was last enqueued."""
        return f"{self.prefix}:jobs:queued"

    @property
    def jobs_running(self) -> str:
        """Sorted set: running job id -> when its current run started."""
        return f"{self.prefix}:jobs:running"

    @property
    def jobs_delivered(self) -> str:
        """Sorted set: queued job id -> when a worker received its message (not yet started)."""
        return f"{self.prefix}:jobs:delivered"

    @property
    def ledger(self) -> str:
        """Stream: every job state change (job, event, at, attempt)."""
        return f"{self.prefix}:ledger"

    @property
    def violations(self) -> str:
        """Stream: every attempt to store different bytes under an existing content key."""
        return f"{self.prefix}:violations"

    @property
    def rejected(self) -> str:
        """Stream: broker messages no task could run (dropped, never executed), with why."""
        return f"{self.prefix}:rejected-messages"

    @property
    def verifications(self) -> str:
        """Sorted set: verification run id -> when it started."""
        return f"{self.prefix}:verifications"

    def verification(self, run_id: str) -> str:
        """String: one verification run's record (canonical JSON)."""
        return f"{self.prefix}:verification:{run_id}"

    @property
    def alerts(self) -> str:
        """Stream: every verification alarm (run, key, outcome, where)."""
        return f"{self.prefix}:alerts"

    @property
    def counters(self) -> str:
        """Hash: monotonically increasing counters (job events, results, verifications)."""
        return f"{self.prefix}:counters"

    def rerank(self, run_id: str) -> str:
        """Hash: a re-ranking run's spec, total, chunk count and summary."""
        return f"{self.prefix}:rerank:{run_id}"

    def rerank_chunks(self, run_id: str) -> str:
        """Hash: chunk index -> that chunk's report rows (JSON lines), once it finished."""
        return f"{self.prefix}:rerank:{run_id}:chunks"

    @property
    def log_leaves(self) -> str:
        """List: the transparency log's leaves (transparency.leaf), in log order; index =
        leaf index."""
        return f"{self.prefix}:log:leaves"

    @property
    def log_index(self) -> str:
        """Hash: result key -> its leaf index."""
        return f"{self.prefix}:log:index"

    def log_hashes(self, level: int, chunk: int) -> str:
        """String: the 32-byte hashes of the complete subtrees at ``level``, nodes
        ``chunk * LOG_CHUNK`` onwards, concatenated (a tile of the Merkle tree)."""
        return f"{self.prefix}:log:hashes:{level}:{chunk}"

    @property
    def log_checkpoints(self) -> str:
        """Sorted set: signed checkpoint notes -> when each was signed (the signed history)."""
        return f"{self.prefix}:log:checkpoints"

    def worker(self, instance: str) -> str:
        """String with a TTL: present while the worker instance is alive."""
        return f"{self.prefix}:worker:{instance}"

    @property
    def celery(self) -> str:
        """Prefix kombu puts before its own keys (queues, unacked messages)."""
        return f"{self.prefix}:celery:"
