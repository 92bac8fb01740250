"""The store: one Redis connection and key prefix, and the components that use them."""

from __future__ import annotations

import time
from collections.abc import Callable

import redis

from ..config import CLUSTER_SHARDS, Settings
from ..errors import ConfigError
from . import migration
from .askers import Askers
from .audits import AuditIndex
from .cluster import is_cluster
from .connection import connect, translated
from .context import StoreContext
from .corpora import CorpusStore
from .failovers import Failovers
from .heartbeats import Heartbeats
from .jobs import JobStore
from .keys import Keys
from .ledger import Ledger
from .log import CheckpointHistory, TransparencyLog
from .replication import Replication
from .reranks import RerankLog
from .results import ResultStore
from .rounds import Round
from .usage import Usage
from .verifications import VerificationLog


class Store:
    """Corpora, results, audits, jobs, ledger, heartbeats, verifications and the log in one
    Redis, and the replication check of what was written."""

    def __init__(self, client: redis.Redis, prefix: str = "rookhaven", *,
                 chunk_bytes: int = 1 << 20, clock: Callable[[], float] = time.time,
                 min_replicas: int = 0, replica_timeout: float = 2.0,
                 replica_patience: float | None = None, log_shards: int | None = None) -> None:
        self.client = client
        self._ctx = StoreContext(client=client, prefix=prefix, clock=clock, shards=log_shards)
        self.corpora = CorpusStore(self._ctx, chunk_bytes)
        self.results = ResultStore(self._ctx)
        self.audits = AuditIndex(self._ctx)
        self.jobs = JobStore(self._ctx)
        self.askers = Askers(self._ctx, self.jobs)
        self.ledger = Ledger(self._ctx)
        self.heartbeats = Heartbeats(self._ctx)
        self.verifications = VerificationLog(self._ctx)
        self.reranks = RerankLog(self._ctx)
        self._logs: list[TransparencyLog] | None = None
        self.checkpoints = CheckpointHistory(self._ctx)
        self.failovers = Failovers(self._ctx)
        self.replication = Replication(self._ctx, min_replicas, replica_timeout,
                                       replica_patience)
        self.usage = Usage(self._ctx)

    @property
    def keys(self) -> Keys:
        """The store's key layout (read from Redis at first use: store.layout)."""
        return self._ctx.keys

    @property
    def logs(self) -> list[TransparencyLog]:
        """The transparency log of each shard, in shard order."""
        if self._logs is None:
            self._logs = [TransparencyLog(self._ctx, shard.index) for shard in self.keys.shards]
        return self._logs

    @property
    def log(self) -> TransparencyLog:
        """The log of a store with one shard (a flat store's only log)."""
        if len(self.logs) != 1:
            raise ConfigError(f"this store has {len(self.logs)} log shards: name one "
                              "(store.logs[i], store.log_of(key))")
        return self.logs[0]

    def log_of(self, key: str) -> TransparencyLog:
        """The log of the shard that holds result ``key``."""
        return self.logs[self.keys.shard_of(key)]

    def ever_stored(self, key: str) -> bool:
        """Whether result ``key`` left any trace here: its result or audit, its job record,
        or its log leaf. An erased result keeps its leaf (and a truncated log is caught by
        the checkpoints), so a key with none was never stored: a typo, not an alarm."""
        if self.results.held(key) or self.log_of(key).index_of(key) is not None:
            return True
        try:
            return self.jobs.states_many([key])[0] is not None
        except ConfigError:  # job records of an earlier form: not readable until migrated
            return False

    @classmethod
    def from_settings(cls, settings: Settings) -> Store:
        """A store on ROOKHAVEN_REDIS_URL under ROOKHAVEN_KEY_PREFIX (no I/O yet)."""
        client = connect(settings.redis_url, settings.redis_timeout)
        shards = settings.log_shards
        if shards is None and is_cluster(client):
            shards = CLUSTER_SHARDS  # a cluster can only hold a sharded store
        return cls(client, settings.key_prefix, chunk_bytes=settings.corpus_chunk_bytes,
                   min_replicas=settings.redis_min_replicas,
                   replica_timeout=settings.redis_replica_timeout,
                   replica_patience=settings.redis_timeout, log_shards=shards)

    def migrate(self, *, force: bool = False,
                progress: Callable[[int], None] = lambda moved: None) -> int:
        """Move an earlier release's job records (form 1) into today's form (store.migration):
        how many moved, 0 if there was nothing to do."""
        return migration.migrate(self._ctx, force=force, progress=progress)

    def drop_audit_copies(self, progress: Callable[[int], None] = lambda seen: None
                          ) -> tuple[int, int]:
        """Delete the audit copies an earlier release stored beside their results that equal
        the audit each result frames (store.migration): (deleted, kept)."""
        return migration.drop_audit_copies(self._ctx, progress=progress)

    def round(self) -> Round:
        """An empty Round: job-script calls queued to go out in one round trip."""
        return Round(self._ctx)

    def now(self) -> float:
        """The store's clock (Unix seconds); every stored time comes from it."""
        return self._ctx.clock()

    def ping(self) -> None:
        """Check the server answers; StoreUnavailableError if not."""
        with translated(self.client, "checking the connection"):
            self.client.ping()

    def close(self) -> None:
        self.client.close()
