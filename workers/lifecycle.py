"""Worker lifecycle hooks: fresh connections in each pool child, and the liveness heartbeat.

The heartbeat thread runs in the worker's main process: if that process dies (SIGKILL,
OOM, lost machine) the key expires and the sweeper re-enqueues the jobs it was running
within ROOKHAVEN_WORKER_HEARTBEAT seconds, not after the broker's visibility timeout.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from celery.signals import (
    beat_init,
    worker_init,
    worker_process_init,
    worker_ready,
    worker_shutdown,
)

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


@worker_process_init.connect
def _fresh_child(**_: Any) -> None:
    runtime.reset()


def _beat(store: Store) -> None:
    ttl = application.settings.worker_heartbeat
    while True:
        try:
            store.heartbeats.beat(runtime.INSTANCE, ttl)
        except RookhavenError as exc:
            log.warning("heartbeat failed: %s", exc)
        if _stop.wait(ttl / 4):
            return


@worker_ready.connect
def _start_heartbeat(**_: Any) -> None:
    settings = application.settings
    store = Store.from_settings(settings)
    threading.Thread(target=_beat, args=(store,), name="rookhaven-heartbeat",
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
