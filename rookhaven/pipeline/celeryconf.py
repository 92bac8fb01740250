"""Celery configuration for producers and workers alike, built from Settings.

Why each setting (see docs/adr/0005-job-ledger.md):
- JSON only: a pickle body could run code in the worker; anything else is refused.
- late ack + reject on worker lost + prefetch 1: a message leaves the broker only once its
  task has finished, and a worker holds at most one it has not started.
- ack on failure: a task that raised is not redelivered forever; the ledger retries it.
- visibility timeout above the hard time limit: a slow task is never delivered twice at
  once; the time limit enforces the bound.
- unacked restore every few seconds instead of ~100 s, so lost messages come back soon.
- no result backend: workers write results to the store themselves.
"""

from __future__ import annotations

import math
import tempfile
from pathlib import Path
from typing import Any

from celery.schedules import crontab
from kombu.entity import Queue

from ..config import Settings
from ..store import urls
from ..store.keys import Keys

TASK_JOB = "rookhaven.job"
TASK_BATCH = "rookhaven.batch"
TASK_SWEEP = "rookhaven.sweep"
TASK_VERIFY = "rookhaven.verify"
TASK_CHECKPOINT = "rookhaven.checkpoint"
TASK_HEAL = "rookhaven.heal"
# Every task a Rookhaven worker runs: a message naming anything else is refused.
TASKS = frozenset({TASK_JOB, TASK_BATCH, TASK_SWEEP, TASK_VERIFY, TASK_CHECKPOINT, TASK_HEAL})
QUEUE = "rookhaven"
# Sweeps and the jobs they re-enqueue go here, not behind the backlog in QUEUE: workers
# consume both and kombu alternates between non-empty queues, so a dead worker's jobs and
# the sweeper itself are served within a task or two instead of after the whole backlog.
QUEUE_RECOVERY = "rookhaven.recovery"
# The soft time limit, as a share of the hard one: the task records its failure before the
# pool child is killed.
SOFT_LIMIT_SHARE = 0.9
# The longest pause between attempts to publish a message while the broker is away (s).
PUBLISH_PAUSE = 0.5


def beat_file(settings: Settings) -> Path:
    """Where celery beat keeps its state: the setting, else one file per key prefix in /tmp."""
    if settings.beat_schedule_file is not None:
        return settings.beat_schedule_file
    return Path(tempfile.gettempdir()) / f"rookhaven-beat-{settings.key_prefix}"


def nightly(at: str) -> crontab:
    """A daily crontab at ``at`` (HH:MM, UTC: the app's timezone is UTC)."""
    hour, minute = at.split(":")
    return crontab(hour=int(hour), minute=int(minute))


def celery_config(settings: Settings) -> dict[str, Any]:
    """The Celery settings for ``settings``; pass to ``app.conf.update``."""
    timeout = settings.redis_timeout
    return {
        **_broker(urls.parse(*settings.broker, broker=True), {
            "visibility_timeout": settings.visibility_timeout,
            "unacked_restore_interval": settings.unacked_restore_interval,
            "unacked_restore_throttle": 1,
            "global_keyprefix": Keys(settings.key_prefix).celery,
            "socket_timeout": timeout,
            "socket_connect_timeout": timeout,
        }),
        "broker_connection_retry_on_startup": True,
        "task_serializer": "json",
        "result_serializer": "json",
        "accept_content": ["json"],
        "result_accept_content": ["json"],
        "task_ignore_result": True,
        "result_backend": None,
        "task_acks_late": True,
        "task_reject_on_worker_lost": True,
        "task_acks_on_failure_or_timeout": True,
        "worker_prefetch_multiplier": 1,
        "worker_cancel_long_running_tasks_on_connection_loss": True,
        "task_time_limit": settings.task_time_limit,
        "task_soft_time_limit": settings.task_time_limit * SOFT_LIMIT_SHARE,
        "task_default_queue": QUEUE,
        "task_queues": [Queue(QUEUE, routing_key=QUEUE),  # type: ignore[no-untyped-call]
                        Queue(QUEUE_RECOVERY,  # type: ignore[no-untyped-call]
                              routing_key=QUEUE_RECOVERY)],
        # The nightly verifier goes with the sweeps so a backlog cannot delay it for hours.
        "task_routes": {TASK_SWEEP: {"queue": QUEUE_RECOVERY},
                        TASK_VERIFY: {"queue": QUEUE_RECOVERY},
                        TASK_CHECKPOINT: {"queue": QUEUE_RECOVERY},
                        TASK_HEAL: {"queue": QUEUE_RECOVERY}},
        "timezone": "UTC",
        "enable_utc": True,
        # A publish rides through a failover as the store's commands do (store/patience.py):
        # retried for about ROOKHAVEN_REDIS_TIMEOUT, at most half a second apart.
        "task_publish_retry_policy": {
            "max_retries": max(2, math.ceil(timeout / PUBLISH_PAUSE)), "interval_start": 0,
            "interval_step": PUBLISH_PAUSE / 2, "interval_max": PUBLISH_PAUSE,
        },
        "worker_hijack_root_logger": False,
        "worker_send_task_events": False,
        "task_send_sent_event": False,
        "beat_schedule": {
            "rookhaven-sweep": {
                "task": TASK_SWEEP,
                "schedule": settings.sweep_interval,
                # A sweep nobody ran in time is replaced by the next, never queued up.
                "options": {"expires": settings.sweep_interval},
            },
            "rookhaven-heal": {
                "task": TASK_HEAL,
                "schedule": settings.heal_interval,
                "options": {"expires": settings.heal_interval},
            },
            "rookhaven-checkpoint": {
                "task": TASK_CHECKPOINT,
                "schedule": settings.checkpoint_interval,
                "options": {"expires": settings.checkpoint_interval},
            },
            "rookhaven-verify": {
                "task": TASK_VERIFY,
                "schedule": nightly(settings.verify_at),
                # A night missed (beat down) is skipped, not run late at a busy hour.
                "options": {"expires": 6 * 3600},
            },
        },
        "beat_schedule_filename": str(beat_file(settings)),
    }


def _broker(url: urls.StoreURL, transport: dict[str, Any]) -> dict[str, Any]:
    """broker_url and its transport options (and TLS) for the broker's URL (ROOKHAVEN_BROKER_URL,
    else the store's): a Sentinel URL becomes kombu's Sentinel transport, asking those
    Sentinels for the primary they name."""
    where = url.sentinel
    if where is None:
        return {"broker_url": url.text, "broker_transport_options": transport}
    sockets = {k: v for k, v in transport.items() if k.startswith("socket_")}
    conf: dict[str, Any] = {
        "broker_url": where.kombu_url(),
        "broker_transport_options": {
            **transport, "master_name": where.service,
            "sentinel_kwargs": {**sockets, **where.tls_kwargs(), **where.sentinel_login()},
        },
    }
    if where.tls:  # kombu turns TLS on only for a non-empty dict; verify by default
        conf["broker_use_ssl"] = {"ssl_cert_reqs": "required", **dict(where.tls_options)}
    return conf
