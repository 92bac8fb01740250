"""Sending job messages to the workers, by task name (the producer never imports workers).

The task id of a single job is its content key, so a redelivered or re-sent duplicate is
recognisable in Celery's own logs; a batch's id is the digest of the keys it carries.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Protocol

from celery import Celery

from ..config import Settings
from ..errors import StoreUnavailableError
from ..store.urls import redact
from .celeryconf import QUEUE, QUEUE_RECOVERY, TASK_BATCH, TASK_JOB, celery_config


class Dispatcher(Protocol):
    """Puts job ids on the queue."""

    def send(self, job_ids: Sequence[str], batch_size: int, queue: str = QUEUE) -> None:
        """Enqueue ``job_ids`` on ``queue``: one job per message, or ``batch_size`` per batch
        message."""
        ...

    def waiting(self) -> int | None:
        """How many messages wait on the job queues right now; None if it cannot tell."""
        ...

    def close(self) -> None:
        """Release the broker connections, if any."""
        ...


def batch_id(job_ids: Sequence[str]) -> str:
    """The task id of a batch: ``batch:`` and the sha256 of its keys in order."""
    return "batch:" + hashlib.sha256("\n".join(job_ids).encode()).hexdigest()


class CeleryDispatcher:
    """A Celery producer configured like the workers (JSON only, same broker and queue)."""

    def __init__(self, settings: Settings) -> None:
        self.app = Celery("rookhaven-producer", set_as_current=False)
        self.app.conf.update(celery_config(settings))
        self._where = redact(settings.broker[0] or "")

    def send(self, job_ids: Sequence[str], batch_size: int, queue: str = QUEUE) -> None:
        if not job_ids:
            return
        try:
            with self.app.producer_or_acquire() as producer:
                if len(job_ids) == 1:
                    self.app.send_task(TASK_JOB, args=[job_ids[0]], task_id=job_ids[0],
                                       producer=producer, queue=queue)
                    return
                for at in range(0, len(job_ids), batch_size):
                    chunk = list(job_ids[at: at + batch_size])
                    self.app.send_task(TASK_BATCH, args=[chunk], task_id=batch_id(chunk),
                                       producer=producer, queue=queue)
        except Exception as exc:  # kombu/redis raise many types; all mean "not enqueued"
            raise StoreUnavailableError(
                f"could not enqueue {len(job_ids)} job(s) on the broker at {self._where}: "
                f"{exc.__class__.__name__}: {str(exc)[:200].rstrip('.')}. The jobs are recorded "
                "as queued and `rookhaven sweep` (or the beat sweeper) will enqueue them once "
                "it is back"
            ) from exc

    def waiting(self) -> int | None:
        try:
            with self.app.connection_for_read() as connection:
                channel = connection.default_channel
                # Not passive: kombu's Redis transport calls an empty queue missing.
                return sum(int(channel.queue_declare(queue=q).message_count)
                           for q in (QUEUE, QUEUE_RECOVERY))
        except Exception:  # unknown, as the broker is down: the sweeper keeps its slow rule
            return None

    def close(self) -> None:
        self.app.close()
