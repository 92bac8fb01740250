"""What this worker holds: the messages Celery has reserved or runs, and those arriving.

A worker's heartbeat names them (store.heartbeats), so the sweeper hands back at once the
jobs of a message the worker dropped while it lives on. Celery knows its messages in the
main process (``celery.worker.state.requests``: reserved, then running, until done,
terminated or forgotten at a connection loss), but a message gets there only after the
``task_received`` hook has marked its jobs delivered: until Celery reserves it, one
arriving is held by this record of its own.
"""

from __future__ import annotations

import time

from celery.worker import state

from rookhaven.store.heartbeats import delivery

# Seconds after the hook returns within which Celery reserves the message: the next
# statements of the same thread (celery.worker.strategy), so a second is ample; one not
# reserved by then was refused (revoked, expired) or dropped.
SETTLE = 1.0


class Holdings:
    """The delivery tokens of the messages this worker's main process holds."""

    def __init__(self, grace: float) -> None:
        # How long a hook may take (its store call waits out a failover): a message whose
        # hook has not returned after this long is not counted as held.
        self._grace = grace
        self._arriving: dict[str, tuple[float, float | None]] = {}  # received, hook done

    def received(self, task_id: str) -> str:
        """Note a message as it arrives, before its jobs are marked delivered; its token."""
        token = delivery(task_id)
        self._arriving[token] = (time.monotonic(), None)
        return token

    def handed(self, token: str) -> None:
        """Note that the hook for the message ``token`` returns: Celery reserves it next."""
        if token in self._arriving:
            self._arriving[token] = (self._arriving[token][0], time.monotonic())

    def __call__(self) -> set[str]:
        """The tokens held now (for the heartbeat; it runs on a thread of its own)."""
        # A copy first: Celery's thread changes the dict meanwhile (copy() holds the GIL).
        reserved = {delivery(task_id) for task_id in state.requests.copy()}
        now = time.monotonic()
        arriving = set()
        for token, (received, handed) in list(self._arriving.items()):
            # Reserved: Celery's to track from now on. Else, past its time, never reserved:
            # refused (revoked, expired) or dropped.
            late = now - received > self._grace if handed is None else now - handed > SETTLE
            if token in reserved or late:
                self._arriving.pop(token, None)
            else:
                arriving.add(token)
        return reserved | arriving
