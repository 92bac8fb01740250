"""Running jobs on a worker: start in the ledger, compute with the core, store the result.

Idempotent by construction: a job already done (or a result already stored) is skipped,
and storing identical bytes twice is a no-op, so a redelivered message costs one round
trip. The Celery tasks in ``workers`` are thin adapters over ``Executor``.
"""

from __future__ import annotations

import contextlib
import logging
import secrets
import time
from collections.abc import Callable, Sequence

from ..config import Settings
from ..core.canonical import embeds
from ..core.engines import engine_ref
from ..core.identity import result_key
from ..errors import EngineMismatchError, InputError, IntegrityError, StoreUnavailableError
from ..store import JobSpec, Store
from ..store.results import Offered
from ..store.rounds import Reply, Round
from .cache import RetrieverCache
from .celeryconf import SOFT_LIMIT_SHARE

log = logging.getLogger("rookhaven.pipeline")

# Jobs begun together, whose results are stored together: one round trip per chunk, and
# one script each to begin and to store (every job of a chunk is in one log shard and over
# one corpus). A worker killed mid-chunk has charged each of them an attempt; a job begun
# before (attempts above 0 when claimed) then runs in a chunk of its own, so a job that
# kills its worker reaches the attempt limit alone and every other job is charged at most
# one extra attempt. 32, not 8: each chunk's BEGIN, MSETNX and COMPLETE cost Redis ~100 us
# whatever their size, a quarter of its CPU a job at 8 (ADR 0036, amended); a crash now
# recomputes up to 32 jobs, milliseconds of work.
CHUNK = 32


class Executor:
    """Executes jobs by id against the store, with a per-process index cache."""

    def __init__(self, store: Store, settings: Settings,
                 fatal: tuple[type[BaseException], ...] = (),
                 cache: RetrieverCache | None = None, job_lines: int = logging.INFO) -> None:
        self.store = store
        # The level of the one line per job and delivery: a worker's record of its work;
        # below the default where the caller shows progress instead (inline runs).
        self._job_lines = job_lines
        self.settings = settings
        self.cache = cache or RetrieverCache(store.corpora.stream, settings.index_cache_size)
        # Exceptions that must end the task at once (the soft time limit), after recording.
        self._fatal = fatal

    def run(self, job_ids: Sequence[str], worker: str) -> list[str]:
        """Run each job; per job: 'done', 'stored', 'skipped:<state>', 'failed' or 'retry'.

        'stored' is a result stored and logged whose job record was gone by then: Redis
        restarted without writes it had answered (``appendfsync everysec``, ADR 0023). The
        result is whole; the record is not recreated, and the job is not counted done.

        Jobs go in chunks of ``CHUNK``: a chunk is begun (each job charged an attempt) in
        the round trip that stores the previous chunk's results, so a batch costs one round
        trip per chunk, not two per job (see ``CHUNK`` for what a crash then costs).
        With ROOKHAVEN_REDIS_MIN_REPLICAS, the jobs' writes are then confirmed on replicas
        (one WAIT for the whole message); ReplicationError if they are not, and the caller
        must not acknowledge the message. A job's log line comes after that confirmation.
        """
        # This delivery's claim: a copy of the message started after it takes the jobs
        # over, and only the claim that started a job last may begin (charge) it.
        claim = f"{worker}/{secrets.token_hex(8)}"
        mark = self.store.replication.mark()  # a failover before the confirmation voids it
        started = self.store.jobs.start(job_ids, worker, claim)
        outcomes: dict[str, tuple[str, float]] = {}
        runnable: list[tuple[str, int, JobSpec]] = []
        for job_id, (verdict, attempts, spec) in zip(job_ids, started, strict=True):
            if spec is None:
                outcomes[job_id] = (f"skipped:{verdict}", 0.0)
            else:
                runnable.append((job_id, attempts, spec))
        chunks = _chunks(runnable, self.store.keys.shard_of)
        round_ = self.store.round()
        begun = self._queue_begins(round_, chunks[0] if chunks else [], worker, claim)
        round_.send(f"beginning {len(begun)} job(s)")
        for at, chunk in enumerate(chunks):
            round_ = self.store.round()
            stored = self._compute_chunk(chunk, begun, round_, outcomes)
            begun = self._queue_begins(round_, chunks[at + 1] if at + 1 < len(chunks) else [],
                                       worker, claim)
            round_.send(f"storing {len(stored)} result(s) and beginning {len(begun)} job(s)")
            for job_id, seconds, put in stored:
                try:
                    verdict = put.get()
                except IntegrityError:  # logged, recorded and the job closed by the store
                    outcomes[job_id] = ("failed", seconds)
                    continue
                outcomes[job_id] = ("stored" if verdict == "stored" else "done", seconds)
        lost = [job_id for job_id, (outcome, _) in outcomes.items() if outcome == "stored"]
        if lost:
            log.warning("%d job record(s) vanished while their jobs ran (first: %s): Redis "
                        "lost writes it had acknowledged, as it may under appendfsync "
                        "everysec. Their results are stored and logged; see ops/runbook.md "
                        "on a crash that lost writes", len(lost), lost[0],
                        extra={"jobs": len(lost)})
        timed = [(job_id, *outcomes[job_id]) for job_id in dict.fromkeys(job_ids)]
        try:
            self.store.replication.confirm(f"the writes of {len(job_ids)} job(s)", since=mark)
        except StoreUnavailableError:  # replicas short, or the primary gone meanwhile
            for job_id, outcome, seconds in timed:
                self._logged(job_id, f"{outcome}:unconfirmed", seconds)
            raise
        return [self._logged(job_id, outcome, seconds) for job_id, outcome, seconds in timed]

    def _queue_begins(self, round_: Round, chunk: list[tuple[str, int, JobSpec]],
                      worker: str, claim: str) -> list[Reply[tuple[str, int]]]:
        if not chunk:
            return []
        return self.store.jobs.queue_begin(round_, [job_id for job_id, _, _ in chunk], worker,
                                           self.settings.job_max_attempts, claim)

    def _compute_chunk(self, chunk: list[tuple[str, int, JobSpec]],
                       begun: list[Reply[tuple[str, int]]], round_: Round,
                       outcomes: dict[str, tuple[str, float]],
                       ) -> list[tuple[str, float, Reply[str]]]:
        """Compute a begun chunk and queue its results on ``round_``; the jobs that ended
        otherwise go to ``outcomes``. If the soft time limit ends the task, the results
        computed before it are stored first."""
        computed: list[tuple[str, float, Offered]] = []
        try:
            for (job_id, _, spec), reply in zip(chunk, begun, strict=True):
                began = time.perf_counter()
                try:
                    outcome, offered = self._step(job_id, spec, reply)
                except BaseException:  # logged at once, as it ends the task
                    self._logged(job_id, "interrupted", time.perf_counter() - began)
                    raise
                if offered is None:
                    outcomes[job_id] = (outcome, time.perf_counter() - began)
                else:
                    computed.append((job_id, time.perf_counter() - began, offered))
        except self._fatal:
            puts = self._queue_puts(round_, computed)
            round_.send(f"storing {len(computed)} result(s) before the task ends")
            for _, _, put in puts:  # a refused chunk is stored one by one in its get()
                # An IntegrityError is logged, recorded and its job closed by the store.
                with contextlib.suppress(IntegrityError):
                    put.get()
            raise
        return self._queue_puts(round_, computed)

    def _queue_puts(self, round_: Round, computed: list[tuple[str, float, Offered]],
                    ) -> list[tuple[str, float, Reply[str]]]:
        puts = self.store.results.queue_put(round_, [offered for _, _, offered in computed])
        return [(job_id, seconds, put)
                for (job_id, seconds, _), put in zip(computed, puts, strict=True)]

    def _step(self, job_id: str, spec: JobSpec, begun: Reply[tuple[str, int]],
              ) -> tuple[str, Offered | None]:
        """Compute one begun job: ('done', its result and audit to store), or how it ended
        otherwise (and None)."""
        verdict, attempt = begun.get()
        if verdict == "failed":
            log.error("job %s failed: its attempts are spent", job_id, extra={"job": job_id})
            return "failed", None
        if verdict != "run":
            return f"skipped:{verdict}", None
        try:
            result, audit = self.compute(spec)
        except (InputError, EngineMismatchError) as exc:
            self._fail(job_id, exc, permanent=True)
            return "failed", None
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
            return ("retry" if verdict == "queued" else "failed"), None
        if not embeds(result, audit):  # copies that disagree: a bug, never stored
            refused = IntegrityError(
                f"the result computed for {job_id} does not embed its audit; nothing was "
                "stored. Report it: core.canonical.result_bytes frames one in the other")
            log.error("job %s: %s", job_id, refused, extra={"job": job_id})
            self._fail(job_id, refused, permanent=True)
            return "failed", None
        return "done", Offered(spec.key, spec.corpus_digest, result, audit)

    def compute(self, spec: JobSpec, *, key_checked: bool = False) -> tuple[bytes, bytes]:
        """The canonical result and audit bytes for ``spec``, checked against its key
        (unless the caller has: ``key_checked``)."""
        retriever = self.cache.get(spec.corpus_digest, spec.provider, spec.params)
        if key_checked:
            return retriever.result_bytes(spec.request)
        key = result_key(spec.request, spec.corpus_digest, retriever.identity)
        if key != spec.key:
            raise EngineMismatchError(
                f"job {spec.key}: the job's key does not match its recipe: it was not "
                "submitted by Rookhaven, or with another engine or configuration than this "
                f"worker's ({engine_ref(retriever.engine.model_dump())}, "
                f"{retriever.config_digest}); resubmit it, with submitters and workers on "
                "one version"
            )
        # Straight to bytes: the same bytes as the validated model gives
        # (tests/unit/test_result_data.py), without building ~2 models per hit.
        return retriever.result_bytes(spec.request)

    def _fail(self, job_id: str, exc: BaseException, *, permanent: bool,
              detail: str | None = None) -> str:
        error = f"{exc.__class__.__name__}: {detail or exc}"
        return self.store.jobs.fail(job_id, error, permanent=permanent,
                                    max_attempts=self.settings.job_max_attempts)

    def _logged(self, job_id: str, outcome: str, seconds: float) -> str:
        """Log the one line a job gets per delivery; return ``outcome``."""
        log.log(self._job_lines, "job %s %s in %.3f s", job_id, outcome, seconds,
                extra={"job": job_id, "state": outcome, "seconds": round(seconds, 6)})
        return outcome


def _chunks(runnable: list[tuple[str, int, JobSpec]], shard_of: Callable[[str], int],
            ) -> list[list[tuple[str, int, JobSpec]]]:
    """``runnable`` (job id, attempts so far, spec) in chunks of up to CHUNK, each of
    one shard and corpus (in the order each first appears); a job begun before runs in a
    chunk of its own."""
    chunks: list[list[tuple[str, int, JobSpec]]] = []
    open_: dict[tuple[int, str], list[tuple[str, int, JobSpec]]] = {}
    for job in runnable:
        if job[1] > 0:
            chunks.append([job])
            continue
        group = (shard_of(job[0]), job[2].corpus_digest)
        current = open_.setdefault(group, [])
        if not current:
            chunks.append(current)  # filled in place; its place in the order is now
        current.append(job)
        if len(current) == CHUNK:
            open_[group] = []
    return chunks
