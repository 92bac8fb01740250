"""The Celery tasks: thin adapters from a message (job ids, JSON) to the Executor.

Tasks take references, never objects: a job id is its result key, and the job record in
the store holds the request and the corpus digest.
"""

from __future__ import annotations

import logging
from collections import Counter
from typing import Any

from celery import Celery, Task
from celery.exceptions import Reject

from rookhaven.errors import InputError, ReplicationError
from rookhaven.pipeline import (
    TASK_BATCH,
    TASK_CHECKPOINT,
    TASK_HEAL,
    TASK_JOB,
    TASK_SWEEP,
    TASK_VERIFY,
)
from rookhaven.store.heartbeats import delivery
from rookhaven.transparency import checkpoints
from rookhaven.transparency.mirror import Mirror
from rookhaven.verification import Selection, Verifier
from rookhaven.verification.logcheck import pinned_from

from .runtime import WorkerRuntime

log = logging.getLogger("rookhaven.log")


def _job_ids(value: Any) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise InputError(f"a batch must be a list of job ids (strings), got {value!r:.80}")
    return value


def register_tasks(app: Celery, runtime: WorkerRuntime) -> None:
    """Add Rookhaven's tasks to ``app``, each running against ``runtime``.

    ``shared=False``: Celery adds shared tasks to every app it finalizes, so a second app in
    the process (``rookhaven demo``) would otherwise run the first app's closures.
    """

    def run(task: str, value: Any, task_id: str | None) -> dict[str, int]:
        """The message's jobs run; how many ended in each state. The count, not a list of
        outcomes: Celery writes a task's return value into its own log line (saferepr) and
        sends it back to the main process, a hundred strings a message for no reader."""
        try:
            job_ids = _job_ids(value)
        except InputError as exc:
            runtime.reject(task, str(exc))
            return {}
        try:
            # Claimed under the message's token, which the worker's heartbeat names while
            # it holds the message.
            outcomes = runtime.executor().run(job_ids, runtime.instance,
                                              delivery(task_id) if task_id else "")
        except ReplicationError as exc:
            # Not acknowledged: the message goes back to the queue, and its next delivery
            # finds the jobs done and only waits for the replicas again.
            raise Reject(str(exc), requeue=True) from exc
        unknown = [j for j, o in zip(job_ids, outcomes, strict=True) if o == "skipped:missing"]
        # A message naming no job was not sent by Rookhaven's submitters, or its records were
        # lost in a failover before a replica held them (MIN_REPLICAS=0; a waiting submitter
        # records them again).
        if unknown:
            runtime.reject(task, f"no job is stored under {unknown[0][:80]!r}"
                      + (f" nor {len(unknown) - 1} other id(s)" if len(unknown) > 1 else "")
                      + " (not sent by Rookhaven, or its record was lost in a failover)")
        return dict(Counter(outcomes))

    @app.task(name=TASK_JOB, shared=False, bind=True)
    def run_job(self: Task, job_id: str) -> dict[str, int]:
        """Run one job by id."""
        return run(TASK_JOB, [job_id], self.request.id)

    @app.task(name=TASK_BATCH, shared=False, bind=True)
    def run_batch(self: Task, job_ids: list[str]) -> dict[str, int]:
        """Run a chunk of jobs by id: one message, one set of round trips for all of them."""
        return run(TASK_BATCH, job_ids, self.request.id)

    @app.task(name=TASK_SWEEP, shared=False)
    def sweep() -> dict[str, Any]:
        """Enqueue again the jobs that have no result (the beat schedule runs this)."""
        report = runtime.pipeline().sweep()
        return {"requeued": len(report.requeued), "done": len(report.done),
                "failed": len(report.failed), "skipped": report.skipped}

    @app.task(name=TASK_HEAL, shared=False)
    def heal() -> dict[str, Any]:
        """Recompute done jobs whose result was lost (beat runs this)."""
        return {"healed": len(runtime.pipeline().heal())}

    @app.task(name=TASK_CHECKPOINT, shared=False)
    def checkpoint() -> dict[str, Any]:
        """Sign a checkpoint of the log if it grew, then bring the mirror up to date if one
        is set (beat runs this); with neither a key nor a mirror, nothing to do."""
        settings = runtime.settings
        done: dict[str, Any] = {"signed": False, "reason": "ROOKHAVEN_LOG_KEY_FILE is not set"}
        if settings.log_key_file is not None:
            store = runtime.store()
            before = checkpoints.latest(store)
            note = checkpoints.current(store,
                                       checkpoints.read_private_key(settings.log_key_file))
            done = {"signed": note != before, "size": checkpoints.checked(note, None).size}
            if done["signed"]:  # the operator's record of what the log committed to, and when
                log.info("signed a checkpoint of the log at size %d", done["size"],
                         extra={"size": done["size"]})
        if settings.log_mirror_dir is not None:  # the copy outside Redis follows each one
            done["mirrored"] = Mirror(settings.log_mirror_dir).update(runtime.store()).after
        return done

    @app.task(name=TASK_VERIFY, shared=False)
    def verify(sample: int | None = None, seed: str | None = None) -> dict[str, Any]:
        """Replay a seeded sample of stored results (the nightly beat schedule runs this)."""
        settings = runtime.settings.with_overrides(verify_sample=sample)
        selection = Selection(sample=settings.verify_sample, seed=seed,
                              stratify=settings.verify_stratify)
        run = Verifier(runtime.store(), settings).run(selection, pinned=pinned_from(settings))
        return {"run_id": run.run_id, "checked": run.checked, "matched": run.matched,
                "alarms": run.alarms, "drift": run.drift}
