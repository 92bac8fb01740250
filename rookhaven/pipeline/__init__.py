"""The job pipeline's service layer: what the CLI, the MCP server and the workers call.

Front ends: ``open_pipeline(settings)`` -> ``Pipeline`` (submit, job, result, audit, wait,
sweep, add_corpus). Workers: ``Executor`` (runs jobs by id). Tests: ``RecordingDispatcher``
(records sends instead of enqueuing). See docs/adr/0005-job-ledger.md.
"""

from __future__ import annotations

from ..config import Settings
from ..store import Store
from .cache import RetrieverCache
from .celeryconf import (
    QUEUE,
    QUEUE_RECOVERY,
    TASK_BATCH,
    TASK_CHECKPOINT,
    TASK_HEAL,
    TASK_JOB,
    TASK_SWEEP,
    TASK_VERIFY,
    TASKS,
    celery_config,
)
from .dispatch import CeleryDispatcher, Dispatcher
from .executor import Executor
from .fake import RecordingDispatcher
from .service import JobRef, Pipeline, SweepReport

__all__ = [
    "QUEUE",
    "QUEUE_RECOVERY",
    "TASKS",
    "TASK_BATCH",
    "TASK_CHECKPOINT",
    "TASK_HEAL",
    "TASK_JOB",
    "TASK_SWEEP",
    "TASK_VERIFY",
    "CeleryDispatcher",
    "Dispatcher",
    "Executor",
    "JobRef",
    "Pipeline",
    "RecordingDispatcher",
    "RetrieverCache",
    "SweepReport",
    "celery_config",
    "open_pipeline",
]


def open_pipeline(settings: Settings) -> Pipeline:
    """A Pipeline on ROOKHAVEN_REDIS_URL (store and broker) under ROOKHAVEN_KEY_PREFIX."""
    return Pipeline(Store.from_settings(settings), CeleryDispatcher(settings), settings)
