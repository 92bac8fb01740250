"""Worker lifecycle hooks: fresh connections in each pool child, and the liveness heartbeat.

The heartbeat thread runs in the worker's main process: if that process dies (SIGKILL,
OOM, lost machine) the key expires and the sweeper re-enqueues the jobs it was running
within ROOKHAVEN_WORKER_HEARTBEAT seconds, not after the broker's visibility timeout. Each
heartbeat names the messages the worker holds (workers.holdings), so the jobs of one it
dropped while living on go back as soon.
Celery's signals are process-wide, so each hook acts only for the app it was connected
for (``sender.app``): a process may hold more than one app (``rookhaven demo``).
"""

from __future__ import annotations

import gc
import logging
import threading
import time
from typing import Any

from celery import Celery
from celery.bootsteps import RUN
from celery.signals import (
    beat_init,
    task_prerun,
    task_received,
    task_rejected,
    worker_init,
    worker_process_init,
    worker_ready,
    worker_shutdown,
)

from rookhaven import metrics
from rookhaven.core import compiled
from rookhaven.errors import RookhavenError
from rookhaven.logs import configure_logging
from rookhaven.pipeline import TASK_BATCH, TASK_JOB
from rookhaven.pipeline.warmup import start_beside
from rookhaven.store import Store
from rookhaven.store.layout import CURRENT as JOBS_FORM

from . import broker, pool
from .runtime import WorkerRuntime

log = logging.getLogger("rookhaven.workers")


def _consuming(consumer: Any) -> bool:
    blueprint = getattr(consumer, "blueprint", None)
    return blueprint is None or blueprint.state == RUN


def _beat(runtime: WorkerRuntime, store: Store, consumer: Any, stop: threading.Event) -> None:
    ttl = runtime.settings.worker_heartbeat
    while True:
        try:
            # A process whose consumer has stopped is not a live worker: stop vouching
            # for it, so the sweeper hands its jobs to workers that still consume.
            if _consuming(consumer):
                store.heartbeats.beat(runtime.instance, ttl, runtime.holdings)
                store.failovers.baseline()  # once: a failover from now on is seen
            else:
                store.heartbeats.stop(runtime.instance)
        except RookhavenError as exc:
            log.warning("heartbeat failed: %s", exc)
        if stop.wait(ttl / 4):
            return


def connect_hooks(app: Celery, runtime: WorkerRuntime) -> None:
    """Connect the lifecycle hooks of ``app``'s workers and beat to ``runtime``."""
    stop = threading.Event()

    def ours(sender: Any) -> bool:
        return getattr(sender, "app", None) is app

    def on_beat_init(sender: Any = None, **_: Any) -> None:
        # Here, not at import, so importing the app (tests, `celery inspect`) leaves
        # logging be. Beat only sends tasks: it has no engine to warm up (the embedded beat
        # of `worker -B`, a child process, failed reading the sample corpus under 3.13).
        if ours(sender):
            configure_logging(runtime.settings.log_level)

    def on_init(sender: Any = None, **_: Any) -> None:
        if not ours(sender):
            return
        configure_logging(runtime.settings.log_level)
        if _needs_migration(Store.from_settings(runtime.settings)):
            # Before consuming: a worker that took messages it cannot run would drop them,
            # and one kept running past the migration would keep the old view of the store.
            prefix = runtime.settings.key_prefix
            log.error("the store under prefix %r keeps its job records in an earlier "
                      "Rookhaven's form: this worker can run no job. Run `rookhaven store "
                      "migrate` (ops/runbook.md, Upgrading), then start it again", prefix,
                      extra={"prefix": prefix})
            raise SystemExit(2)
        broker.harden()  # restore-on-close off, lost acks reconnect, guarded reads
        pool.guard()  # a garbled message from a pool process ends it, not the worker
        # Jobs run from the start, on the reference paths (the same bytes); the kernels
        # compile, or load from numba's cache, in a process of their own meanwhile, and
        # each pool process switches to them at its first task after they are ready.
        # With ROOKHAVEN_KERNEL_WARMUP=none the cache is known filled: they load at first use.
        if not runtime.compile_kernels:
            compiled.hold()  # the reference paths throughout (the demo's small corpus)
        elif (kernels := start_beside(runtime.settings)) is not None:
            runtime.kernels = kernels
            log.info("compiling the engine's kernels in the background",
                     extra={"engine": runtime.settings.engine})
        elif compiled.AVAILABLE:
            log.info("the engine's kernels load from numba's cache at first use "
                     "(ROOKHAVEN_KERNEL_WARMUP=none)", extra={"engine": runtime.settings.engine})

    def on_task_start(sender: Any = None, **_: Any) -> None:
        kernels = runtime.kernels
        if kernels is not None and ours(sender) and kernels.switch_if_ready():
            log.info("using the compiled kernels", extra={
                "engine": runtime.settings.engine,
                "seconds_since_start": round(time.monotonic() - kernels.started, 3)})

    def on_worker_init(sender: Any = None, **_: Any) -> None:
        if not ours(sender):
            return
        if runtime.settings.worker_prefetch:
            prefetch()
        # Everything made so far (modules, prefetched indexes) lives as long as
        # the process: frozen, the pool children's collector never walks it, 5-6% of a cold
        # bm25@3 request at 100k, and never writes to its headers, which would copy the
        # pages the children share with this process.
        gc.freeze()
        log.info("froze the objects the pool inherits", extra={"objects": gc.get_freeze_count()})

    def prefetch() -> None:
        began = time.perf_counter()
        try:
            digests = runtime.prefetch()
        except RookhavenError as exc:  # the pool indexes on demand instead
            log.warning("could not prefetch corpora: %s", exc)
            return
        log.info("prefetched %d corpus index(es)", len(digests),
                 extra={"corpora": digests, "seconds": round(time.perf_counter() - began, 3)})

    def on_child(**_: Any) -> None:
        runtime.reset()

    def on_ready(sender: Any = None, **_: Any) -> None:
        if not ours(sender):
            return
        settings = runtime.settings
        store = Store.from_settings(settings)
        threading.Thread(target=_beat, args=(runtime, store, sender, stop),
                         name="rookhaven-heartbeat", daemon=True).start()
        if settings.metrics_port is not None:
            metrics.serve(store, settings.metrics_host, settings.metrics_port)
        log.info("worker ready", extra={"instance": runtime.instance,
                                        "metrics_port": settings.metrics_port})

    def on_rejected(sender: Any = None, message: Any = None, exc: Any = None,
                    **_: Any) -> None:
        if not ours(sender):
            return
        headers = getattr(message, "headers", None)
        task = str(headers.get("task", "?")) if isinstance(headers, dict) else "?"
        reason = f"{exc.__class__.__name__}: {exc}"
        if message is not None:
            reason += f" (content-type {getattr(message, 'content_type', None)!r})"
        runtime.reject(task, reason)

    def on_received(sender: Any = None, request: Any = None, **_: Any) -> None:
        # In the main process, before the pool gets the message: from here until the
        # pool's START claims them, the jobs are this worker's in the sweeper's eyes.
        if not ours(sender):
            return
        job_ids = _delivered_job_ids(request)
        if not job_ids:
            return
        token = runtime.holdings.received(str(getattr(request, "id", "")))
        try:
            runtime.store().jobs.deliver(job_ids, runtime.instance, token)
        except RookhavenError as exc:  # the job still runs; a sweep after SWEEP_AFTER backs it
            log.warning("could not mark %d job(s) delivered: %s", len(job_ids), exc)
        finally:
            runtime.holdings.handed(token)

    def on_shutdown(sender: Any = None, **_: Any) -> None:
        if not ours(sender):
            return
        stop.set()
        if runtime.kernels is not None:
            runtime.kernels.stop()
        try:
            Store.from_settings(runtime.settings).heartbeats.stop(runtime.instance)
        except RookhavenError as exc:
            log.warning("could not clear the heartbeat: %s", exc)

    # weak=False: the handlers are closures that nothing else holds.
    worker_init.connect(on_init, weak=False)
    worker_init.connect(on_worker_init, weak=False)
    beat_init.connect(on_beat_init, weak=False)
    worker_process_init.connect(on_child, weak=False)
    worker_ready.connect(on_ready, weak=False)
    worker_shutdown.connect(on_shutdown, weak=False)
    task_rejected.connect(on_rejected, weak=False)
    task_received.connect(on_received, weak=False)
    task_prerun.connect(on_task_start, weak=False)


def _needs_migration(store: Store) -> bool:
    """Whether ``store`` keeps job records of an earlier form (unknown while Redis does not
    answer: its jobs will say so if it does)."""
    try:
        return store.keys.jobs_form < JOBS_FORM
    except RookhavenError:
        return False


def _delivered_job_ids(request: Any) -> list[str]:
    """The job ids a job or batch message carries; none for other tasks or a malformed body
    (the task itself refuses that one, saying why)."""
    name, args = getattr(request, "name", None), getattr(request, "args", None)
    if not isinstance(args, (list, tuple)) or len(args) != 1:
        return []
    ids = [args[0]] if name == TASK_JOB else args[0] if name == TASK_BATCH else []
    if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
        return []
    return ids
