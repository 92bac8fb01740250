"""The workers' Celery consumer: a message no task can run is rejected, never fatal.

Celery 5.7 lets an exception from a task's start strategy escape the consumer (a message
with no content-type fails to unpack and ends the worker's main process), and acts on some
headers only after the message is handed to the pool (a ``timelimit`` of strings ends the
main process there, with the message left unacknowledged to end the next worker too).
Here every message is checked first (``inbound``): its headers, its content type and a body
the named task's signature takes. One that fails takes Celery's own path for an invalid
task: logged, rejected (dropped) and announced by the ``task_rejected`` signal, which the
lifecycle hooks record in the store. Undecodable envelopes are caught earlier, in kombu's
read (``broker``), and reported for the consumer that owns the connection.
"""

from __future__ import annotations

from typing import Any

from celery.worker.consumer import Consumer

from rookhaven.errors import MessageError
from rookhaven.pipeline import TASKS

from .broker import OWNER
from .inbound import check_body, check_headers


class GuardedConsumer(Consumer):  # type: ignore[misc]
    """A Consumer whose task handler rejects, instead of dying on, a message it cannot run."""

    def connection_for_read(self, heartbeat: Any = None) -> Any:
        connection = super().connection_for_read(heartbeat)
        setattr(connection, OWNER, self)  # whom ``broker`` reports a rejected envelope for
        return connection

    def create_task_handler(self, *args: Any, **kwargs: Any) -> Any:
        handler = super().create_task_handler(*args, **kwargs)

        def on_task_received(message: Any) -> Any:
            try:
                self._check(message)
                return handler(message)
            except Exception as exc:  # anything a message's content can raise
                return self.on_invalid_task(None, message, exc)

        return on_task_received

    def _check(self, message: Any) -> None:
        headers = message.headers
        if not isinstance(headers, dict):
            raise MessageError("the message has no headers object")
        check_headers(headers)
        task = self.app.tasks.get(headers["task"]) if headers["task"] in TASKS else None
        if task is None:
            raise MessageError(f"no task is named {headers['task'][:80]!r}")
        check_body(message.content_type, message.content_encoding, message.body, task.run)
