"""A dispatcher for tests: records every send, and can run the jobs or fail on demand."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from ..errors import RookhavenError
from ..store import Store
from .celeryconf import QUEUE
from .executor import Executor


class Send(NamedTuple):
    """One call of ``send``: the job ids, the batch size and the queue, as given."""

    job_ids: list[str]
    batch_size: int
    queue: str


class RecordingDispatcher:
    """A Dispatcher that records each send instead of enqueuing it.

    With ``ledger``, every job sent must already be recorded as queued there (the record
    exists before the message does). With ``executor``, the jobs run at once, a batch at a
    time, as worker ``worker``. While ``fail`` is set, ``send`` raises it and records nothing.
    """

    def __init__(self, ledger: Store | None = None, executor: Executor | None = None,
                 worker: str = "fake", fail: Exception | None = None) -> None:
        self.ledger = ledger
        self.executor = executor
        self.worker = worker
        self.fail = fail
        self.sends: list[Send] = []
        self.backlog: int | None = None

    def send(self, job_ids: Sequence[str], batch_size: int, queue: str = QUEUE) -> None:
        """Record the send (or raise ``fail``), then run its jobs if there is an executor."""
        if self.fail is not None:
            raise self.fail
        if self.ledger is not None:
            for job_id, record in zip(job_ids, self.ledger.jobs.get_many(job_ids), strict=True):
                if record is None or record.state != "queued":
                    state = "missing" if record is None else record.state
                    raise RookhavenError(f"job {job_id} was sent while its record is {state}, "
                                         "not queued: the ledger must know a job first")
        self.sends.append(Send(list(job_ids), batch_size, queue))
        if self.executor is not None:
            for batch in _chunks(list(job_ids), batch_size):
                self.executor.run(batch, self.worker)

    def waiting(self) -> int | None:
        """``backlog``, as the test set it (None: unknown, as by default)."""
        return self.backlog

    def close(self) -> None:
        """Nothing to release."""

    def batches(self) -> list[list[str]]:
        """The job ids of every batch sent so far, ``batch_size`` at a time, in order."""
        return [batch for sent in self.sends for batch in _chunks(sent.job_ids, sent.batch_size)]

    def job_ids(self) -> list[str]:
        """Every job id sent so far, in order."""
        return [job_id for sent in self.sends for job_id in sent.job_ids]


def _chunks(job_ids: list[str], size: int) -> list[list[str]]:
    return [job_ids[at: at + size] for at in range(0, len(job_ids), size)]
