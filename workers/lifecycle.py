"""Worker lifecycle hooks: fresh connections in each pool child, and the liveness heartbeat.

The heartbeat thread runs in the worker's main process: if that process dies (SIGKILL,
OOM, lost machine) the key expires and the sweeper re-enqueues the jobs it was running
within ROOKHAVEN_WORKER_HEARTBEAT seconds, not after the broker's visibility timeout.
Celery's signals are process-wide, so each hook acts only for the app it was connected
for (``sender.app``): a process may hold more than one app (``rookhaven demo``).
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from celery import Celery
from celery.bootsteps import RUN
from celery.signals import (
    beat_init,
    worker_init,
    worker_process_init,
    worker_ready,
    worker_shutdown,
)
from kombu.transport import redis as kombu_redis

from rookhaven import metrics
from rookhaven.errors import RookhavenError
from rookhaven.logs import configure_logging
from rookhaven.store import Store

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
                store.heartbeats.beat(runtime.instance, ttl)
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

    def on_init(sender: Any = None, **_: Any) -> None:
        if not ours(sender):
            return
        # Here, not at import, so importing the app (tests, `celery inspect`) leaves
        # logging be.
        configure_logging(runtime.settings.log_level)
        # Restoring unacked messages on channel close can end a worker whose broker just
        # died (ADR 0005, "restore on close"); they come back by the periodic restore.
        kombu_redis.Channel.do_restore = False

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

    def on_shutdown(sender: Any = None, **_: Any) -> None:
        if not ours(sender):
            return
        stop.set()
        try:
            Store.from_settings(runtime.settings).heartbeats.stop(runtime.instance)
        except RookhavenError as exc:
            log.warning("could not clear the heartbeat: %s", exc)

    # weak=False: the handlers are closures that nothing else holds.
    worker_init.connect(on_init, weak=False)
    beat_init.connect(on_init, weak=False)
    worker_process_init.connect(on_child, weak=False)
    worker_ready.connect(on_ready, weak=False)
    worker_shutdown.connect(on_shutdown, weak=False)
