"""The service layer the front ends call: add corpora, submit jobs, read them back, sweep.

The job record is written before its message is enqueued, and a request whose result is
already stored is answered at once without enqueuing (see docs/adr/0005-job-ledger.md).
"""

from __future__ import annotations

import contextlib
import logging
import time
import uuid
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict

from ..config import Settings
from ..core.canonical import canonical_bytes, to_plain
from ..core.corpus import Corpus
from ..core.engines import engine_spec
from ..core.identity import key_frame
from ..errors import PrimaryChangedError, RookhavenError, WaitTimeoutError
from ..models import Document, RetrievalRequest
from ..store import CorpusEntry, JobRecord, JobSpec, JobState, Store
from ..store.jobs import recipe_frame
from .cache import RetrieverCache
from .celeryconf import QUEUE_RECOVERY
from .dispatch import Dispatcher

log = logging.getLogger("rookhaven.pipeline")
T = TypeVar("T")

# A running job is swept this long after its task's hard time limit, to let the pool
# report the kill first.
RUNNING_GRACE = 5.0
# A live worker marks a message's jobs delivered within milliseconds of popping it, so with
# no message waiting, a queued job unmarked for this many heartbeats has lost its message.
LOST_AFTER_HEARTBEATS = 3


# A job as submitted: its key (its id) and the bytes its record holds (store.jobs.spec_bytes).
Made = tuple[str, bytes]

# What a job's state is after store.jobs.create answered this verdict.
_STATE_AFTER: dict[str, JobState] = {
    "new": "queued", "cached": "done", "queued": "queued", "running": "running", "done": "done",
}



# How many times a write is made again when a failover may have taken it (each failover
# during one write costs one; three in a row means something else is wrong).
REDO_AFTER_FAILOVER = 3
# Seconds between ``wait_many``'s progress reports.
PROGRESS_EVERY = 10.0
# Why a job stays open, for a submitter that waited long: what will move it on.
_WHY_OPEN = ("A queued job waits for a worker (`celery -A workers worker`); the sweeper "
             "(`rookhaven sweep`, or the beat's every ROOKHAVEN_SWEEP_INTERVAL) enqueues again "
             "one queued past ROOKHAVEN_SWEEP_AFTER, held by a stopped worker, or open when "
             "its primary failed over.")


def _open(states: Counter[str]) -> str:
    """``states`` as '12 queued, 3 running'."""
    return ", ".join(f"{count} {state}" for state, count in sorted(states.items()))


class JobRef(BaseModel):
    """What submission returns: the job (whose id is the result key) and where it stands."""

    model_config = ConfigDict(frozen=True)

    job_id: str
    result_key: str
    state: JobState
    cached: bool
    corpus_digest: str


class SweepReport(BaseModel):
    """What one sweep did: jobs enqueued again, closed as done or failed, left alone."""

    model_config = ConfigDict(frozen=True)

    requeued: list[str] = []
    done: list[str] = []
    failed: list[str] = []
    skipped: int = 0
    failovers: int = 0  # log shards whose primary changed since the last sweep


class Pipeline:
    """Submission, lookup and sweeping over one store and one dispatcher."""

    def __init__(self, store: Store, dispatcher: Dispatcher, settings: Settings) -> None:
        self.store = store
        self.dispatcher = dispatcher
        self.settings = settings
        # Only providers and their identities are used here; nothing is indexed.
        self._providers = RetrieverCache(store.corpora.stream, 1)

    def add_corpus(self, documents: Sequence[Document] | Corpus,
                   name: str | None = None) -> CorpusEntry:
        """Store a corpus (immutably, by digest) and register it under ``name``."""
        corpus = documents if isinstance(documents, Corpus) else Corpus(documents)
        # The same bytes again, if written again: a corpus is stored by digest.
        return self._surviving(lambda: self.store.corpora.put(corpus, name),
                               f"storing corpus {corpus.digest}")

    def spec(self, request: RetrievalRequest, corpus_digest: str, provider: str | None = None,
             params: dict[str, Any] | None = None) -> JobSpec:
        """The job for ``request`` over a stored corpus digest, with its content key."""
        name, pinned, make = self._maker(corpus_digest, provider, params)
        key, _ = make(self.settings.check_request(request))
        return JobSpec(key=key, request=request, corpus_digest=corpus_digest, provider=name,
                       params=pinned)

    def _maker(self, corpus_digest: str, provider: str | None,
               params: dict[str, Any] | None,
               ) -> tuple[str, dict[str, Any], Callable[[RetrievalRequest], Made]]:
        """The engine's full name, its pinned parameters and a maker of jobs over
        ``corpus_digest`` with it: the engine and the bytes every key and record share are
        made once; per request only its own canonical bytes, hashed for its key and closing
        its record."""
        # Records name the full engine (name@version): a bare name means the default
        # version only when submitted, never when read back years later.
        chosen = engine_spec(provider or self.settings.engine)
        name, pinned = chosen.ref, chosen.pinned(params or {})
        _, identity = self._providers.provider(name, pinned)
        frame, recipe = key_frame(corpus_digest, identity), recipe_frame(corpus_digest, name,
                                                                         pinned)

        def make(request: RetrievalRequest) -> Made:
            encoded = canonical_bytes(to_plain(request))
            return frame.key(encoded), recipe + encoded + b"}"

        return name, pinned, make

    def submit(self, request: RetrievalRequest, corpus: str = "latest",
               provider: str | None = None, params: dict[str, Any] | None = None,
               *, asked_by: str | None = None) -> JobRef:
        """Record and enqueue one job; answer at once if its result is already stored."""
        return self.submit_many([request], corpus, provider, params, asked_by=asked_by)[0]

    def submit_many(self, requests: Sequence[RetrievalRequest], corpus: str = "latest",
                    provider: str | None = None, params: dict[str, Any] | None = None,
                    *, rerank: bool = False, asked_by: str | None = None) -> list[JobRef]:
        """``submit`` for many requests over one corpus; new jobs go out in batch messages.

        Every request is checked before anything is written; then the jobs are made,
        recorded and sent a batch at a time, so workers start on the first batch while the
        rest is made and recorded; every job's record is written before its message. With
        ``rerank`` (a re-ranking run's comparisons) the jobs it creates are noted as made
        for a comparison, not served; anyone else's submission of a job makes it history.
        ``asked_by``: the MCP token that asked, noted with each job before its record."""
        for request in requests:
            self.settings.check_request(request)
        digest = self.store.corpora.resolve(corpus)
        _, _, make = self._maker(digest, provider, params)
        size = self.settings.batch_size
        refs: list[JobRef] = []
        # A batch at a time: only a batch's jobs are alive at once, so the collector never
        # walks a whole submission's (it cost a quarter of a large submission's CPU).
        for at in range(0, len(requests), size):
            batch = list(map(make, requests[at: at + size]))
            answered = self._record(batch, rerank, asked_by)
            self.dispatcher.send(list(dict.fromkeys(
                key for (key, _), v in zip(batch, answered, strict=True) if v == "new")), size)
            refs += [JobRef(job_id=key, result_key=key, cached=v == "cached",
                            state=_STATE_AFTER[v], corpus_digest=digest)
                     for (key, _), v in zip(batch, answered, strict=True)]
        return refs

    def _record(self, batch: list[Made], rerank: bool, asked_by: str | None = None,
                ) -> list[str]:
        """Record ``batch``'s jobs (each key with its recorded bytes): each one's verdict
        (a job new to any attempt is new: its message is still to be sent)."""
        fresh: set[str] = set()
        keys, recipes = [k for k, _ in batch], [r for _, r in batch]

        def write() -> list[str]:
            self.store.failovers.baseline()  # once: a failover from now on is seen
            if asked_by is not None:
                self.store.askers.note(keys, asked_by)
            answered = ["new" if k in fresh else v for k, v in zip(
                keys, self.store.jobs.create_recorded(keys, recipes), strict=True)]
            fresh.update(k for k, v in zip(keys, answered, strict=True) if v == "new")
            if rerank:
                self.store.reranks.made([k for k in keys if k in fresh])
            else:
                self.store.reranks.asked([k for k in keys if k not in fresh])
            return answered

        return self._surviving(write, f"recording {len(batch)} job(s)")

    def _surviving(self, write: Callable[[], T], doing: str) -> T:
        """``write()``'s answer once its writes would survive a failover
        (ROOKHAVEN_REDIS_MIN_REPLICAS); written again when a primary was replaced before its
        replicas confirmed them, up to REDO_AFTER_FAILOVER times."""
        attempt = 1
        while True:
            mark = self.store.replication.mark()
            done = write()
            try:
                self.store.replication.confirm(doing, since=mark)
                return done
            except PrimaryChangedError:
                if attempt >= REDO_AFTER_FAILOVER:
                    raise
                attempt += 1
                log.warning("a primary failed over while %s; writing again", doing)

    def job(self, job_id: str) -> JobRecord:
        """The job record (NotFoundError if there is none)."""
        return self.store.jobs.get(job_id)

    def result(self, key: str) -> bytes:
        """The canonical result bytes under ``key`` (NotFoundError if not stored)."""
        return self.store.results.get(key)

    def audit(self, key: str) -> bytes:
        """The canonical audit bytes under ``key`` (NotFoundError if not stored)."""
        return self.store.results.audit(key)

    def wait(self, job_id: str, timeout: float, poll: float = 0.05) -> JobRecord:
        """The job record once it is done or failed; WaitTimeoutError after ``timeout`` s."""
        deadline = time.monotonic() + timeout
        while True:
            record = self.job(job_id)
            if record.state in ("done", "failed"):
                return record
            if time.monotonic() >= deadline:
                raise WaitTimeoutError(
                    f"job {job_id} is still {record.state} after {timeout:g} s; check it later "
                    "with `rookhaven job ID`, and that workers run (`celery -A workers worker`)"
                )
            time.sleep(poll)

    def wait_many(self, job_ids: Sequence[str], timeout: float, poll: float = 0.05,
                  page: int = 1000, *, resubmit: Callable[[list[str]], None] | None = None,
                  progress: Callable[[str], None] | None = None,
                  every: float = PROGRESS_EVERY) -> list[JobRecord | None]:
        """``wait`` for many jobs: their records (in order) once every one is done or failed,
        read in pages of ``page``; a job with no record but its result (answered from the
        store, its record since removed) is None. WaitTimeoutError after ``timeout`` s.

        A job with neither record nor result was lost by a failover that came before a
        replica held its record (ROOKHAVEN_REDIS_MIN_REPLICAS=0): ``resubmit`` records it
        again; without it the job is waited for until the timeout says so. Every ``every`` s
        ``progress`` hears how many are still open, and in which state."""
        deadline = time.monotonic() + timeout
        records: dict[str, JobRecord | None] = {}
        pending = list(dict.fromkeys(job_ids))
        told = time.monotonic()
        lost = 0
        while True:
            still: list[str] = []
            states: Counter[str] = Counter()
            for at in range(0, len(pending), page):
                chunk = pending[at:at + page]
                # Polled by state alone; a record (with its spec) is read once, when finished.
                read = self.store.jobs.states_many(chunk)
                gone = [job_id for job_id, state in zip(chunk, read, strict=True)
                        if state is None and not self.store.results.exists(job_id)]
                if gone and resubmit is not None:
                    resubmit(gone)
                    lost += len(gone)
                ended = [job_id for job_id, state in zip(chunk, read, strict=True)
                         if (state is None and job_id not in gone)
                         or state in ("done", "failed")]
                for job_id, record in zip(ended, self.store.jobs.get_many(ended), strict=True):
                    records[job_id] = record
                still += [job_id for job_id in chunk if job_id not in records]
                states.update("lost" if job_id in gone else str(state)
                              for job_id, state in zip(chunk, read, strict=True)
                              if job_id not in records)
            pending = still
            if not pending:
                return [records[job_id] for job_id in job_ids]
            if time.monotonic() >= deadline:
                raise WaitTimeoutError(
                    f"{len(pending)} of {len(records) + len(pending)} job(s) are not done "
                    f"after {timeout:g} s ({_open(states)}; first: {pending[0]}). {_WHY_OPEN} "
                    "Check them later with `rookhaven job ID`")
            if progress is not None and time.monotonic() - told >= every:
                told = time.monotonic()
                again = f"; {lost} recorded again after a failover lost them" if lost else ""
                progress(f"waiting for {len(pending)} of {len(records) + len(pending)} "
                         f"job(s): {_open(states)}{again}")
            time.sleep(poll)

    def heal(self) -> list[str]:
        """Recompute every done job whose result is gone (an eviction, a partial restore):
        the inputs are in its record, so the same key gets the same bytes again."""
        reopened: list[str] = []
        for page in self.store.jobs.lost():
            found = [job_id for job_id in page if self.store.jobs.reopen(job_id) == "reopened"]
            self.dispatcher.send(found, self.settings.batch_size, QUEUE_RECOVERY)
            reopened += found
        if reopened:
            log.warning("%d done job(s) had lost their result; recomputing them",
                        len(reopened), extra={"jobs": len(reopened)})
        return reopened

    def sweep(self, older_than: float | None = None, limit: int = 10_000) -> SweepReport:
        """Enqueue again every job with no result that is queued for longer than
        ``older_than`` (default ROOKHAVEN_SWEEP_AFTER), or running on a dead worker or past
        the time limit, or open in a log shard whose primary changed since the last sweep (a
        failover); fail those out of attempts with their last error."""
        s = self.settings
        now = self.store.now()
        # With no message waiting, a queued job no worker received has lost its message (a
        # worker killed between popping it and recording it): it need not wait SWEEP_AFTER.
        idle = older_than is None and self.dispatcher.waiting() == 0
        stale = self.store.jobs.stale(
            queued_before=now - (s.sweep_after if older_than is None else older_than),
            undelivered_before=now - min(s.sweep_after, LOST_AFTER_HEARTBEATS
                                         * s.worker_heartbeat) if idle else None,
            running_before=now - (s.task_time_limit + RUNNING_GRACE),
            holding=self.store.heartbeats.holding, limit=limit,
        )
        # A primary that changed since the last sweep may have lost its jobs' last writes
        # (done, or started, back to queued with no message left): all its open jobs go again.
        # This sweep claims that for a sweep interval: one that outlasts it may be done again
        # by the next sweep (a duplicate finds its job claimed or done), and one whose sweep
        # died holds the next sweeps back no longer.
        token = uuid.uuid4().hex
        changed, record = self.store.failovers.changed(token, s.sweep_interval)
        outcome: dict[str, list[str]] = {"requeue": [], "done": [], "failed": []}
        skipped = 0
        why: Counter[str] = Counter()
        try:
            reopened = [job for shard in changed for job in self.store.jobs.open_in(
                shard, "open when its primary changed (a failover may have lost its last "
                "writes)")]
            stale += reopened
            for job in {job.id: job for job in stale}.values():
                verdict = self.store.jobs.requeue(job, s.job_max_attempts)
                if verdict in outcome:
                    outcome[verdict].append(job.id)
                else:
                    skipped += 1
                if verdict == "requeue":
                    why[job.reason] += 1
            self.dispatcher.send(outcome["requeue"], s.batch_size, QUEUE_RECOVERY)
        except BaseException:
            # The next sweep does the hand-back at once, not when the claim expires.
            with contextlib.suppress(RookhavenError):
                self.store.failovers.release(changed, token)
            raise
        # After the jobs went out: a sweep that died before redoes it.
        self.store.failovers.settle(record, token)
        for reason, count in why.most_common():  # the operator's record of each hand-back
            log.warning("sent %d job(s) again: %s", count, reason,
                        extra={"jobs": count, "reason": reason})
        if changed:
            log.warning("%d log shard(s) changed primary since the last sweep; their %d open "
                        "job(s) were looked at again", len(changed), len(reopened),
                        extra={"shards": len(changed)})
        return SweepReport(requeued=outcome["requeue"], done=outcome["done"],
                           failed=outcome["failed"], skipped=skipped,
                           failovers=len(changed))
