"""A dispatcher that runs jobs in this process instead of enqueuing them.

Jobs still go through the ledger and the store exactly as on a worker (same Executor, same
write-once keys), so results made inline are indistinguishable from the workers' results.
Used where no worker runs: bulk re-ranking with ``--inline``, the demo, benchmarks.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from ..config import Settings
from ..store import Store
from .celeryconf import QUEUE
from .executor import Executor
from .service import Pipeline


class InlineDispatcher:
    """Runs each batch of job ids at once with ``executor``."""

    def __init__(self, executor: Executor, worker: str = "inline") -> None:
        self.executor = executor
        self.worker = worker

    def send(self, job_ids: Sequence[str], batch_size: int, queue: str = QUEUE) -> None:
        for at in range(0, len(job_ids), batch_size):
            self.executor.run(list(job_ids[at: at + batch_size]), self.worker)

    def waiting(self) -> int | None:
        """None: a job left queued here failed and waits for its retry, not a message."""
        return None

    def close(self) -> None:
        """Nothing to release: jobs ran in this process."""


def inline_pipeline(store: Store, settings: Settings) -> Pipeline:
    """A Pipeline over ``store`` whose jobs run in this process as they are submitted; their
    per-job log lines are debug, as the command running them shows progress instead."""
    executor = Executor(store, settings, job_lines=logging.DEBUG)
    return Pipeline(store, InlineDispatcher(executor), settings)
