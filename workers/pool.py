"""The prefork pool's edge: a pool process's garbled message or its exit ends that process,
never the worker.

The worker's main process reads each pool process's results from a pipe (Celery 5.7's
``celery.concurrency.asynpool.ResultHandler._recv_message``). A message there that does not
unpickle (seen once in the Sentinel chaos test, right after Celery terminated a task it
could no longer acknowledge, the stream out of step with its message boundaries) raised
past every handler, and the main process exited ("Unrecoverable error: UnpicklingError")
with every message it held. ``guard`` keeps Celery's read and checks its decode: the pool
process whose stream is garbled is killed (the pool starts another; Celery fails the task
it ran as lost, and with ``task_reject_on_worker_lost`` its message goes back), and the
pipe's reader is dropped.

When the consumer reconnects to the broker, Celery registers the pool's processes with the
event loop again, each by the descriptor it watches for the process's exit; a process that
exited in between (a task Celery terminated at the connection loss) has none left, and
Celery 5.7 handed None to the loop: "Unrecoverable error: ValueError('file descriptor is
None')" ended the worker (seen once in the Sentinel chaos test). ``guard`` skips such a
process: it is gone, and the pool's maintenance starts another.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import pickle
import signal
from typing import Any, BinaryIO

from celery.concurrency import asynpool

log = logging.getLogger("rookhaven.workers")

_celerys_read = asynpool.ResultHandler._recv_message
_celerys_track = asynpool.AsynPool._track_child_process
_UNSEEN = object()


def guard() -> None:
    """Install the checked read and the tracking that skips an exited process
    (idempotent)."""
    asynpool.ResultHandler._recv_message = _recv_message
    asynpool.AsynPool._track_child_process = _track_child_process


def _track_child_process(self: Any, process: Any, hub: Any) -> None:
    """Celery's watch on ``process``'s exit, unless it exited and was let go already (its
    descriptor None: Celery's own ``_untrack_child_process`` sets it so)."""
    if getattr(process, "_sentinel_poll", _UNSEEN) is None:
        return
    _celerys_track(self, process, hub)


def _recv_message(self: Any, add_reader: Any, fd: int, callback: Any, **options: Any) -> Any:
    """Celery's reader of one message from pool pipe ``fd``, with ``load`` checked. Both of
    Celery's callers, and kombu's event loop, drop a reader that raises OSError(EBADF)."""

    def load(stream: BinaryIO) -> Any:
        try:
            return pickle.load(stream)
        except Exception as exc:  # garbage decodes to any error; none is the worker's end
            _end_process(self, fd, exc)
            raise OSError(errno.EBADF, f"a garbled message from a pool process: {exc!r}"
                          ) from exc

    options["load"] = load
    return _celerys_read(self, add_reader, fd, callback, **options)


def _end_process(handler: Any, fd: int, exc: Exception) -> None:
    """Kill the pool process that writes to pipe ``fd``: its stream is lost."""
    process = handler.fileno_to_outq.get(fd)
    pid = getattr(process, "pid", None)
    log.error("a message from pool process %s did not decode (%r); killing it: the pool "
              "starts another and its task goes back to the queue", pid, exc,
              extra={"pid": pid})
    if pid:
        with contextlib.suppress(ProcessLookupError):  # gone: the pool replaces it anyway
            os.kill(pid, signal.SIGKILL)
