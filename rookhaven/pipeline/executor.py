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
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from ..collector import collector_paused
from ..config import Settings
from ..core.canonical import canonical_bytes, embeds, to_plain
from ..core.engines import engine_ref
from ..core.identity import KeyFrame, key_frame
from ..errors import EngineMismatchError, InputError, IntegrityError, StoreUnavailableError
from ..store import JobSpec, Store
from ..store.results import Offered
from ..store.rounds import Reply, Round
from ..store.scripts import MAX_JOBS
from .cache import RetrieverCache
from .celeryconf import SOFT_LIMIT_SHARE

log = logging.getLogger("rookhaven.pipeline")

# Jobs computed together, whose results are stored together: a message's fresh jobs of one
# log shard and corpus are one chunk (up to the scripts' MAX_JOBS), begun by the START that
# claims them and stored by one MSETNX and one COMPLETE after their rankings ran back to
# back: two round trips a message. A worker killed mid-chunk has charged each of its jobs
# an attempt; a job begun before (attempts above 0 when claimed) then runs in a chunk of
# its own, after the fresh ones, begun by BEGIN, so a job that kills its worker reaches the
# attempt limit alone and every other job is charged at most one extra attempt (ADR 0051).
CHUNK = MAX_JOBS

# A chunk's computed results are stored once they hold this many bytes, whatever is left
# of the chunk: a message of 500 jobs at the largest recall budget would otherwise hold
# (and send Redis as one command) over 100 MB; at the default budget a chunk is ~2 MB.
STORE_BYTES = 8 << 20

# Key frames kept at most (one per corpus and engine configuration seen lately).
FRAMES = 64

# A job to compute: its id, the attempt it runs as (0: not begun yet), its spec.
Runnable = tuple[str, int, JobSpec]


class Executor:
    """Executes jobs by id against the store, with a per-process index cache."""

    def __init__(self, store: Store, settings: Settings,
                 fatal: tuple[type[BaseException], ...] = (),
                 cache: RetrieverCache | None = None, job_lines: int = logging.INFO) -> None:
        self.store = store
        # The level of the one line per message: a worker's record of its work; below the
        # default where the caller shows progress instead (inline runs). Each job's own
        # line is at DEBUG: at thousands of jobs a second, a line each is a log of its own.
        self._job_lines = job_lines
        self.settings = settings
        self.cache = cache or RetrieverCache(store.corpora.stream, settings.index_cache_size)
        # Exceptions that must end the task at once (the soft time limit), after recording.
        self._fatal = fatal
        # The bytes every key over a corpus and engine shares, for the key check.
        self._frames: dict[tuple[str, str], KeyFrame] = {}

    def run(self, job_ids: Sequence[str], worker: str, delivery: str = "") -> list[str]:
        """Run each job; per job: 'done', 'stored', 'skipped:<state>', 'failed' or 'retry'.
        ``delivery``: the token of the worker's message carrying them (store.heartbeats),
        which the worker's heartbeat names while it holds the message.

        'stored' is a result stored and logged whose job record was gone by then: Redis
        restarted without writes it had answered (``appendfsync everysec``, ADR 0023). The
        result is whole; the record is not recreated, and the job is not counted done.

        The message's jobs are claimed (and its fresh ones begun) in one round trip, the
        chunks' rankings run back to back, and each chunk's results are stored in one round
        trip that also begins the next chunk if it needs it (see ``CHUNK``). With
        ROOKHAVEN_REDIS_MIN_REPLICAS, the jobs' writes are then confirmed on replicas (one
        WAIT for the whole message); ReplicationError if they are not, and the caller must
        not acknowledge the message. The message's log line comes after that confirmation.
        The cyclic collector is paused while a message runs (``collector_paused``).
        """
        with collector_paused():
            return self._run(job_ids, worker, delivery)

    def _run(self, job_ids: Sequence[str], worker: str, delivery: str) -> list[str]:
        began = time.perf_counter()
        # This delivery's claim: a copy of the message started after it takes the jobs
        # over, and only the claim that started a job last may begin (charge) it. It names
        # the message, so the sweeper sees when the worker no longer holds it.
        claim = (f"{worker}/{delivery}{secrets.token_hex(2)}" if delivery
                 else f"{worker}/{secrets.token_hex(8)}")
        mark = self.store.replication.mark()  # a failover before the confirmation voids it
        started = self.store.jobs.start(job_ids, worker, claim, begin=True)
        outcomes: dict[str, tuple[str, float]] = {}
        fresh: list[Runnable] = []
        suspects: list[list[Runnable]] = []
        for job_id, (verdict, attempts, spec) in zip(job_ids, started, strict=True):
            if job_id in outcomes:
                continue  # named twice in the message: computed once
            outcomes[job_id] = (f"skipped:{verdict}", 0.0)
            if spec is not None and verdict == "begun":
                fresh.append((job_id, attempts, spec))
            elif spec is not None:
                suspects.append([(job_id, 0, spec)])
        chunks = [*_chunks(fresh, self.store.keys.shard_of), *suspects]
        round_ = self.store.round()
        begun = self._queue_begins(round_, chunks[0] if chunks else [], worker, claim)
        round_.send(f"beginning {len(chunks[0]) if chunks else 0} job(s)")
        for at, chunk in enumerate(chunks):
            round_ = self.store.round()
            stored = self._compute_chunk(chunk, begun, round_, outcomes)
            begun = self._queue_begins(round_, chunks[at + 1] if at + 1 < len(chunks) else [],
                                       worker, claim)
            round_.send(f"storing {len(stored)} result(s)")
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
        try:
            self.store.replication.confirm(f"the writes of {len(job_ids)} job(s)", since=mark)
        except StoreUnavailableError:  # replicas short, or the primary gone meanwhile
            self._logged(job_ids, outcomes, began, ":unconfirmed")
            raise
        return self._logged(job_ids, outcomes, began)

    def _queue_begins(self, round_: Round, chunk: list[Runnable], worker: str,
                      claim: str) -> list[Reply[tuple[str, int]]]:
        """Each job of ``chunk`` begun: a BEGIN queued on ``round_`` for a chunk not begun
        yet, the answer START gave for one it began."""
        if not chunk or chunk[0][1] > 0:  # a chunk is fresh (begun) or one suspect
            return [Reply.known(("run", attempt)) for _, attempt, _ in chunk]
        return self.store.jobs.queue_begin(round_, [job_id for job_id, _, _ in chunk], worker,
                                           self.settings.job_max_attempts, claim)

    def _compute_chunk(self, chunk: list[Runnable],
                       begun: list[Reply[tuple[str, int]]], round_: Round,
                       outcomes: dict[str, tuple[str, float]],
                       ) -> list[tuple[str, float, Reply[str]]]:
        """Compute a begun chunk and queue its results on ``round_`` (those of its first
        STORE_BYTES stored already, each such piece in a round of its own); the jobs that
        ended otherwise go to ``outcomes``. If the soft time limit ends the task, the
        results computed before it are stored first."""
        computed: list[tuple[str, float, Offered]] = []
        stored: list[tuple[str, float, Reply[str]]] = []
        held = 0
        try:
            for (job_id, _, spec), reply in zip(chunk, begun, strict=True):
                if held >= STORE_BYTES:
                    piece = self.store.round()
                    stored += self._queue_puts(piece, computed)
                    piece.send(f"storing {len(computed)} result(s)")
                    computed, held = [], 0
                began = time.perf_counter()
                try:
                    outcome, offered = self._step(job_id, spec, reply)
                except BaseException:  # logged at once, as it ends the task
                    seconds = time.perf_counter() - began
                    log.log(self._job_lines, "job %s interrupted in %.3f s", job_id, seconds,
                            extra={"job": job_id, "state": "interrupted",
                                   "seconds": round(seconds, 6)})
                    raise
                if offered is None:
                    outcomes[job_id] = (outcome, time.perf_counter() - began)
                else:
                    computed.append((job_id, time.perf_counter() - began, offered))
                    held += len(offered.result) + len(offered.audit)
        except self._fatal:
            puts = self._queue_puts(round_, computed)
            round_.send(f"storing {len(computed)} result(s) before the task ends")
            for _, _, put in stored + puts:  # a refused chunk is stored one by one in get()
                # An IntegrityError is logged, recorded and its job closed by the store.
                with contextlib.suppress(IntegrityError):
                    put.get()
            raise
        return stored + self._queue_puts(round_, computed)

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
            result, audit, engine = self._compute(spec)
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
        return "done", Offered(spec.key, spec.corpus_digest, result, audit, engine)

    def compute(self, spec: JobSpec, *, key_checked: bool = False) -> tuple[bytes, bytes]:
        """The canonical result and audit bytes for ``spec``, checked against its key
        (unless the caller has: ``key_checked``)."""
        if key_checked:
            retriever = self.cache.get(spec.corpus_digest, spec.provider, spec.params)
            return retriever.result_bytes(spec.request)
        result, audit, _ = self._compute(spec)
        return result, audit

    def _compute(self, spec: JobSpec) -> tuple[bytes, bytes, dict[str, Any]]:
        """``compute``, key checked, with the engine as the audit writes it (the retriever's
        identity's): the job's log leaf names it without parsing the audit back."""
        retriever = self.cache.get(spec.corpus_digest, spec.provider, spec.params)
        identity = retriever.identity
        frame = self._frames.get((spec.corpus_digest, identity.config_digest))
        if frame is None:
            if len(self._frames) >= FRAMES:
                self._frames.clear()
            frame = self._frames[spec.corpus_digest, identity.config_digest] = key_frame(
                spec.corpus_digest, identity)
        key = frame.key(canonical_bytes(to_plain(spec.request)))
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
        return (*retriever.result_bytes(spec.request), identity.engine_data)

    def _fail(self, job_id: str, exc: BaseException, *, permanent: bool,
              detail: str | None = None) -> str:
        error = f"{exc.__class__.__name__}: {detail or exc}"
        return self.store.jobs.fail(job_id, error, permanent=permanent,
                                    max_attempts=self.settings.job_max_attempts)

    def _logged(self, job_ids: Sequence[str], outcomes: dict[str, tuple[str, float]],
                began: float, suffix: str = "") -> list[str]:
        """Log each job's line (DEBUG) and the message's; each job's outcome, in order."""
        # Asked once: a line's record (its extra fields) is built only if it is written.
        for job_id, (outcome, seconds) in (outcomes.items() if log.isEnabledFor(logging.DEBUG)
                                           else ()):
            log.debug("job %s %s%s in %.3f s", job_id, outcome, suffix, seconds,
                      extra={"job": job_id, "state": outcome + suffix,
                             "seconds": round(seconds, 6)})
        states = dict(sorted(Counter(outcome + suffix for outcome, _ in outcomes.values())
                             .items()))
        seconds, first = time.perf_counter() - began, job_ids[0] if job_ids else None
        log.log(self._job_lines, "%d job(s) (first %s) in %.3f s: %s", len(outcomes), first,
                seconds, ", ".join(f"{count} {state}" for state, count in states.items()),
                extra={"jobs": len(outcomes), "first": first, "seconds": round(seconds, 6),
                       "states": states})
        return [outcomes[job_id][0] for job_id in job_ids]


def _chunks(runnable: list[Runnable], shard_of: Callable[[str], int]) -> list[list[Runnable]]:
    """``runnable`` in chunks of up to CHUNK, each of one shard and corpus (in the order
    each first appears)."""
    chunks: list[list[Runnable]] = []
    open_: dict[tuple[int, str], list[Runnable]] = {}
    for job in runnable:
        group = (shard_of(job[0]), job[2].corpus_digest)
        current = open_.setdefault(group, [])
        if not current:
            chunks.append(current)  # filled in place; its place in the order is now
        current.append(job)
        if len(current) == CHUNK:
            open_[group] = []
    return chunks
