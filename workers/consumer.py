"""The workers' Celery consumer: a message no task can run is rejected, never fatal.

Celery 5.7 lets an exception from a task's start strategy escape the consumer: a message
with no content-type fails to unpack (ValueError) and ends the worker's main process; the
message stays unacknowledged, is restored, and ends the next worker too. Here it takes
Celery's own path for an invalid task instead: logged, rejected (dropped) and announced by
the ``task_rejected`` signal, which the lifecycle hooks record in the store.
"""

from __future__ import annotations

from typing import Any

from celery.worker.consumer import Consumer


class GuardedConsumer(Consumer):  # type: ignore[misc]
    """A Consumer whose task handler rejects, instead of dying on, a message it cannot run."""

    def create_task_handler(self, *args: Any, **kwargs: Any) -> Any:
        handler = super().create_task_handler(*args, **kwargs)

        def on_task_received(message: Any) -> Any:
            try:
                return handler(message)
            except Exception as exc:  # anything a message's content can raise
                return self.on_invalid_task(None, message, exc)

        return on_task_received
