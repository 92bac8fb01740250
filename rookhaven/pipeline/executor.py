"""Running jobs on a worker: start in the ledger, compute with the core, store the result.

Idempotent by construction: a job already done (or a result already stored) is skipped,
and storing identical bytes twice is a no-op, so a redelivered message costs one round
trip. The Celery tasks in ``workers`` are thin adapters over ``Executor``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence

from ..config import Settings
from ..core.canonical import canonical_bytes
from ..core.identity import result_key
from ..errors import EngineMismatchError, InputError, IntegrityError, StoreUnavailableError
from ..store import JobSpec, Store
from ..store.rounds import Reply
from .cache import RetrieverCache
from .celeryconf import SOFT_LIMIT_SHARE

log = logging.getLogger("rookhaven.pipeline")


class Executor:
    """Executes jobs by id against the store, with a per-process index cache."""

    def __init__(self, store: Store, settings: Settings,
                 fatal: tuple[type[BaseException], ...] = (),
                 cache: RetrieverCache | None = None) -> None:
        self.store = store
        self.settings = settings
        self.cache = cache or RetrieverCache(store.corpora.load, settings.index_cache_size)
        # Exceptions that must end the task at once (the soft time limit), after recording.
        self._fatal = fatal

    def run(self, job_ids: Sequence[str], worker: str) -> list[str]:
        """Run each job; per job: 'done', 'skipped:<state>', 'failed' or 'retry'.

        Each job is begun (charged an attempt) right before it is computed, so a worker
        killed mid-batch costs an attempt only to the job it was computing; the begin of
        the next job travels with the previous job's result, one round trip per job.
        With ROOKHAVEN_REDIS_MIN_REPLICAS, the jobs' writes are then confirmed on replicas
        (one WAIT for the whole message); ReplicationError if they are not, and the caller
        must not acknowledge the message. A job's log line comes after that confirmation.
        """
        started = self.store.jobs.start(job_ids, worker)
        outcomes = {job_id: (f"skipped:{verdict}", 0.0)
                    for job_id, (verdict, _, spec) in zip(job_ids, started, strict=True)
                    if spec is None}
        runnable = [(job_id, spec) for job_id, (_, _, spec) in zip(job_ids, started,
                                                                   strict=True)
                    if spec is not None]
        begun = self._begin_alone(runnable[0][0] if runnable else None, worker)
        for at, (job_id, spec) in enumerate(runnable):
            after = runnable[at + 1][0] if at + 1 < len(runnable) else None
            began = time.perf_counter()
            try:
                outcome, begun = self._step(job_id, spec, begun, after, worker)
            except BaseException:  # the soft time limit: logged at once, as it ends the task
                _logged(job_id, "interrupted", time.perf_counter() - began)
                raise
            outcomes[job_id] = (outcome, time.perf_counter() - began)
        timed = [(job_id, *outcomes[job_id]) for job_id in dict.fromkeys(job_ids)]
        try:
            self.store.replication.confirm(f"the writes of {len(job_ids)} job(s)")
        except StoreUnavailableError:  # replicas short, or the primary gone meanwhile
            for job_id, outcome, seconds in timed:
                _logged(job_id, f"{outcome}:unconfirmed", seconds)
            raise
        return [_logged(job_id, outcome, seconds) for job_id, outcome, seconds in timed]

    def _begin_alone(self, job_id: str | None, worker: str) -> Reply[tuple[str, int]] | None:
        """Begin ``job_id`` in a round trip of its own (None: nothing to begin)."""
        if job_id is None:
            return None
        round_ = self.store.round()
        reply = self.store.jobs.queue_begin(round_, job_id, worker,
                                            self.settings.job_max_attempts)
        round_.send(f"beginning job {job_id}")
        return reply

    def _step(self, job_id: str, spec: JobSpec, begun: Reply[tuple[str, int]] | None,
              after: str | None, worker: str) -> tuple[str, Reply[tuple[str, int]] | None]:
        """Run one begun job; how it ended, and the begin of ``after`` (sent)."""
        assert begun is not None  # every runnable job is begun before its step
        verdict, attempt = begun.get()
        if verdict == "failed":
            log.error("job %s failed: its attempts are spent", job_id, extra={"job": job_id})
            return "failed", self._begin_alone(after, worker)
        if verdict != "run":
            return f"skipped:{verdict}", self._begin_alone(after, worker)
        try:
            result, audit = self.compute(spec)
            round_ = self.store.round()
            stored = self.store.results.queue_put(round_, spec.key, spec.corpus_digest,
                                                  result, audit)
            following = None if after is None else self.store.jobs.queue_begin(
                round_, after, worker, self.settings.job_max_attempts)
            round_.send(f"storing result {spec.key}")
        except (InputError, EngineMismatchError) as exc:
            self._fail(job_id, exc, permanent=True)
            return "failed", self._begin_alone(after, worker)
        except self._fatal as exc:  # the soft time limit: say which limit, and where it is set
            limit = self.settings.task_time_limit
            self._fail(job_id, exc, permanent=False, detail=(
                f"ran past the soft time limit of {limit * SOFT_LIMIT_SHARE:g} s "
                f"({SOFT_LIMIT_SHARE:.0%} of ROOKHAVEN_TASK_TIME_LIMIT={limit:g} s); raise "
                "ROOKHAVEN_TASK_TIME_LIMIT (and ROOKHAVEN_VISIBILITY_TIMEOUT above it) or "
                "shrink the corpus or ROOKHAVEN_BATCH_SIZE"))
            raise
        except Exception as exc:  # anything else may pass on another attempt
            log.exception("job %s attempt %d failed", job_id, attempt,
                          extra={"job": job_id, "attempt": attempt})
            verdict = self._fail(job_id, exc, permanent=False)
            return ("retry" if verdict == "queued" else "failed"), self._begin_alone(after, worker)
        try:
            stored.get()
        except IntegrityError:
            return "failed", following  # logged, recorded and the job closed by the store
        return "done", following

    def compute(self, spec: JobSpec) -> tuple[bytes, bytes]:
        """The canonical result and audit bytes for ``spec``, checked against its key."""
        retriever = self.cache.get(spec.corpus_digest, spec.provider, spec.params)
        key = result_key(spec.request, spec.corpus_digest, retriever.identity)
        if key != spec.key:
            raise EngineMismatchError(
                f"job {spec.key}: the job's key does not match its recipe: it was not "
                "submitted by Rookhaven, or with another engine or configuration than this "
                f"worker's ({retriever.engine.name} {retriever.engine.version}, "
                f"{retriever.config_digest}); resubmit it, with submitters and workers on "
                "one version"
            )
        # Plain data straight to bytes: the same bytes as the validated model gives
        # (tests/unit/test_result_data.py), without building ~2 models per hit.
        result = retriever.result_data(spec.request)
        return canonical_bytes(result), canonical_bytes(result["audit"])

    def _fail(self, job_id: str, exc: BaseException, *, permanent: bool,
              detail: str | None = None) -> str:
        error = f"{exc.__class__.__name__}: {detail or exc}"
        return self.store.jobs.fail(job_id, error, permanent=permanent,
                                    max_attempts=self.settings.job_max_attempts)


def _logged(job_id: str, outcome: str, seconds: float) -> str:
    """Log the one info line a job gets per delivery; return ``outcome``."""
    log.info("job %s %s in %.3f s", job_id, outcome, seconds,
             extra={"job": job_id, "state": outcome, "seconds": round(seconds, 6)})
    return outcome
