"""Worker lifecycle hooks: fresh connections in each pool child, and the liveness heartbeat.

The heartbeat thread runs in the worker's main process: if that process dies (SIGKILL,
OOM, lost machine) the key expires and the sweeper re-enqueues the jobs it was running
within ROOKHAVEN_WORKER_HEARTBEAT seconds, not after the broker's visibility timeout.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

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

from . import application, runtime

log = logging.getLogger("rookhaven.workers")
_stop = threading.Event()


@worker_init.connect
@beat_init.connect
def _logging(**_: Any) -> None:
    # Here, not at import, so importing the app (tests, `celery inspect`) leaves logging be.
    configure_logging(application.settings.log_level)


@worker_init.connect
def _no_restore_on_channel_close(**_: Any) -> None:
    # Celery 5.7 + kombu 5.7: when the broker drops mid-task, the consumer "collects" its
    # connection; if putting the unacked messages back fails then (Redis restarting), the
    # close that follows finds no connection info and raises AttributeError, an
    # "Unrecoverable error" after which the worker hangs in shutdown, never consuming again
    # (seen 1 run in ~6 of the broker-SIGKILL test). Not restoring on channel close avoids
    # that path; unacknowledged messages still come back through the periodic restore
    # after the visibility timeout, and their jobs through the sweeper.
    kombu_redis.Channel.do_restore = False


@worker_process_init.connect
def _fresh_child(**_: Any) -> None:
    runtime.reset()


def _consuming(consumer: Any) -> bool:
    blueprint = getattr(consumer, "blueprint", None)
    return blueprint is None or blueprint.state == RUN


def _beat(store: Store, consumer: Any) -> None:
    ttl = application.settings.worker_heartbeat
    while True:
        try:
            # A process whose consumer has stopped is not a live worker: stop vouching
            # for it, so the sweeper hands its jobs to workers that still consume.
            if _consuming(consumer):
                store.heartbeats.beat(runtime.INSTANCE, ttl)
            else:
                store.heartbeats.stop(runtime.INSTANCE)
        except RookhavenError as exc:
            log.warning("heartbeat failed: %s", exc)
        if _stop.wait(ttl / 4):
            return


@worker_ready.connect
def _start_heartbeat(sender: Any = None, **_: Any) -> None:
    settings = application.settings
    store = Store.from_settings(settings)
    threading.Thread(target=_beat, args=(store, sender), name="rookhaven-heartbeat",
                     daemon=True).start()
    if settings.metrics_port is not None:
        metrics.serve(store, settings.metrics_host, settings.metrics_port)
    log.info("worker ready", extra={"instance": runtime.INSTANCE,
                                    "metrics_port": settings.metrics_port})


@worker_shutdown.connect
def _stop_heartbeat(**_: Any) -> None:
    _stop.set()
    try:
        Store.from_settings(application.settings).heartbeats.stop(runtime.INSTANCE)
    except RookhavenError as exc:
        log.warning("could not clear the heartbeat: %s", exc)
