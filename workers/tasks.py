"""The Celery tasks: thin adapters from a message (job ids, JSON) to the Executor.

Tasks take references, never objects: a job id is its result key, and the job record in
the store holds the request and the corpus digest.
"""

from __future__ import annotations

from typing import Any

from celery.exceptions import SoftTimeLimitExceeded

from rookhaven.errors import InputError
from rookhaven.pipeline import TASK_BATCH, TASK_JOB, TASK_NOOP, TASK_SWEEP, TASK_VERIFY
from rookhaven.verification import Selection, Verifier

from . import application, runtime
from .application import app

FATAL = (SoftTimeLimitExceeded,)


def _job_ids(value: Any) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise InputError(f"a batch must be a list of job ids (strings), got {value!r:.80}")
    return value


@app.task(name=TASK_JOB)
def run_job(job_id: str) -> list[str]:
    """Run one job by id."""
    executor = runtime.executor(application.settings, FATAL)
    return executor.run(_job_ids([job_id]), runtime.INSTANCE)


@app.task(name=TASK_BATCH)
def run_batch(job_ids: list[str]) -> list[str]:
    """Run a chunk of jobs by id: one message, one set of round trips for all of them."""
    executor = runtime.executor(application.settings, FATAL)
    return executor.run(_job_ids(job_ids), runtime.INSTANCE)


@app.task(name=TASK_NOOP)
def noop(tag: str) -> None:
    """Count one call under ``<prefix>:bench:<tag>``: the queue's own floor for bench/."""
    store = runtime.store(application.settings)
    store.client.incr(f"{store.keys.prefix}:bench:{tag}")


@app.task(name=TASK_SWEEP)
def sweep() -> dict[str, Any]:
    """Enqueue again the jobs that have no result (the beat schedule runs this)."""
    report = runtime.pipeline(application.settings).sweep()
    return {"requeued": len(report.requeued), "done": len(report.done),
            "failed": len(report.failed), "skipped": report.skipped}


@app.task(name=TASK_VERIFY)
def verify(sample: int | None = None, seed: str | None = None) -> dict[str, Any]:
    """Replay a seeded sample of stored results (the nightly beat schedule runs this)."""
    settings = application.settings.with_overrides(verify_sample=sample)
    selection = Selection(sample=settings.verify_sample, seed=seed,
                          stratify=settings.verify_stratify)
    run = Verifier(runtime.store(settings), settings).run(selection)
    return {"run_id": run.run_id, "checked": run.checked, "matched": run.matched,
            "alarms": run.alarms, "drift": run.drift}
