"""Per-process state of a worker: its instance name, settings, store, executor and pipeline.

Opened lazily in the process that uses them, so a forked pool child never shares the
parent's Redis sockets. ``INSTANCE`` is fixed at import in the worker's main process and
inherited by its pool children, so the jobs a child runs carry the name the main
process's heartbeat keeps alive.
"""

from __future__ import annotations

import logging
import os
import socket
import uuid

from rookhaven.config import Settings
from rookhaven.errors import RookhavenError
from rookhaven.pipeline import Executor, Pipeline, RetrieverCache, open_pipeline
from rookhaven.pipeline.warmup import BackgroundWarmUp
from rookhaven.store import Store

from .holdings import Holdings

log = logging.getLogger("rookhaven.workers")

INSTANCE = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


class WorkerRuntime:
    """What one worker app's tasks and hooks share in a process."""

    def __init__(self, settings: Settings, fatal: tuple[type[BaseException], ...] = (),
                 compile_kernels: bool = True) -> None:
        self.settings = settings
        self.compile_kernels = compile_kernels
        self.kernels: BackgroundWarmUp | None = None  # the compile the main process started
        self.instance = INSTANCE
        # What the main process holds, for its heartbeat (a received message's hook may
        # wait out the store's patience before Celery reserves it).
        self.holdings = Holdings(settings.redis_timeout + 2 * settings.worker_heartbeat)
        self._fatal = fatal
        self._store: Store | None = None
        self._executor: Executor | None = None
        self._pipeline: Pipeline | None = None
        self._prefetched: RetrieverCache | None = None

    def reset(self) -> None:
        """Forget every connection (called in each new pool child); prefetched indexes
        are kept: plain data, inherited from the parent, shared until written."""
        self._store = self._executor = self._pipeline = None

    def prefetch(self) -> list[str]:
        """Index the ``worker_prefetch`` most recently stored corpora with the default
        engine, in this (the main) process before it forks its pool; their digests."""
        settings = self.settings
        store = Store.from_settings(settings)
        try:
            cache = RetrieverCache(store.corpora.stream, settings.index_cache_size)
            digests = store.corpora.recent(settings.worker_prefetch)
            for digest in reversed(digests):  # the newest is used last: evicted last
                cache.get(digest, settings.engine, {})
        finally:
            store.close()
        self._prefetched = cache
        return digests

    def store(self) -> Store:
        """This process's store."""
        if self._store is None:
            self._store = Store.from_settings(self.settings)
        return self._store

    def executor(self) -> Executor:
        """This process's executor, with its index cache."""
        if self._executor is None:
            store = self.store()
            cache = (self._prefetched.rebound(store.corpora.stream)
                     if self._prefetched is not None else None)
            self._executor = Executor(store, self.settings, self._fatal, cache)
        return self._executor

    def pipeline(self) -> Pipeline:
        """This process's pipeline (for the sweeper)."""
        if self._pipeline is None:
            self._pipeline = open_pipeline(self.settings)
        return self._pipeline

    def reject(self, task: str, reason: str) -> None:
        """Log and record a broker message dropped unexecuted (``task`` it named, or '?')."""
        log.error("dropped a message no task can run: %s", reason,
                  extra={"task": task, "reason": reason})
        try:
            store = self.store()
            store.ledger.reject(task, reason, f"{store.now():.3f}")
        except RookhavenError as failure:
            log.warning("could not record the rejected message: %s", failure)
