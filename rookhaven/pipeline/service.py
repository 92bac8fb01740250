"""The service layer the front ends call: add corpora, submit jobs, read them back, sweep.

The job record is written before its message is enqueued, and a request whose result is
already stored is answered at once without enqueuing (see docs/adr/0005-job-ledger.md).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict

from ..config import Settings
from ..core.corpus import Corpus
from ..core.engines import engine_spec
from ..core.identity import result_key
from ..errors import WaitTimeoutError
from ..models import Document, RetrievalRequest
from ..store import CorpusEntry, JobRecord, JobSpec, JobState, Store
from .cache import RetrieverCache
from .celeryconf import QUEUE_RECOVERY
from .dispatch import Dispatcher

log = logging.getLogger("rookhaven.pipeline")

# A running job is swept this long after its task's hard time limit, to let the pool
# report the kill first.
RUNNING_GRACE = 5.0
# A live worker marks a message's jobs delivered within milliseconds of popping it, so with
# no message waiting, a queued job unmarked for this many heartbeats has lost its message.
LOST_AFTER_HEARTBEATS = 3


# What a job's state is after store.jobs.create answered this verdict.
_STATE_AFTER: dict[str, JobState] = {
    "new": "queued", "cached": "done", "queued": "queued", "running": "running", "done": "done",
}



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
        entry = self.store.corpora.put(corpus, name)
        self.store.replication.confirm(f"storing corpus {entry.digest}")
        return entry

    def spec(self, request: RetrievalRequest, corpus_digest: str, provider: str | None = None,
             params: dict[str, Any] | None = None) -> JobSpec:
        """The job for ``request`` over a stored corpus digest, with its content key."""
        # Records name the full engine (name@version): a bare name means the default
        # version only when submitted, never when read back years later.
        chosen = engine_spec(provider or self.settings.engine)
        name, params = chosen.ref, chosen.pinned(params or {})
        _, identity = self._providers.provider(name, params)
        key = result_key(self.settings.check_request(request), corpus_digest, identity)
        return JobSpec(key=key, request=request, corpus_digest=corpus_digest, provider=name,
                       params=params)

    def submit(self, request: RetrievalRequest, corpus: str = "latest",
               provider: str | None = None, params: dict[str, Any] | None = None) -> JobRef:
        """Record and enqueue one job; answer at once if its result is already stored."""
        return self.submit_many([request], corpus, provider, params)[0]

    def submit_many(self, requests: Sequence[RetrievalRequest], corpus: str = "latest",
                    provider: str | None = None, params: dict[str, Any] | None = None,
                    *, rerank: bool = False) -> list[JobRef]:
        """``submit`` for many requests over one corpus; new jobs go out in batch messages.

        Recorded and sent a batch at a time, so workers start on the first batch while the
        rest is recorded; every job's record is written before its message. With ``rerank``
        (a re-ranking run's comparisons) the jobs it creates are noted as made for a
        comparison, not served; anyone else's submission of a job makes it history."""
        digest = self.store.corpora.resolve(corpus)
        specs = [self.spec(r, digest, provider, params) for r in requests]
        size = self.settings.batch_size
        verdicts: list[str] = []
        for at in range(0, len(specs), size):
            batch = specs[at: at + size]
            answered = self.store.jobs.create_many(batch)
            if rerank:
                self.store.reranks.made([s.key for s, v in zip(batch, answered, strict=True)
                                         if v == "new"])
            else:
                self.store.reranks.asked([s.key for s, v in zip(batch, answered, strict=True)
                                          if v != "new"])
            # A submission is answered only once the job records would survive a failover.
            self.store.replication.confirm(f"recording {len(batch)} job(s)")
            self.dispatcher.send(list(dict.fromkeys(
                s.key for s, v in zip(batch, answered, strict=True) if v == "new")), size)
            verdicts += answered
        return [JobRef(job_id=s.key, result_key=s.key, cached=v == "cached",
                       state=_STATE_AFTER[v], corpus_digest=digest)
                for s, v in zip(specs, verdicts, strict=True)]

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
                  page: int = 1000) -> list[JobRecord | None]:
        """``wait`` for many jobs: their records (in order) once every one is done or failed,
        read in pages of ``page``; a job with no record (a result answered from the store
        whose record is gone) is None. WaitTimeoutError after ``timeout`` s."""
        deadline = time.monotonic() + timeout
        records: dict[str, JobRecord | None] = {}
        pending = list(dict.fromkeys(job_ids))
        while True:
            still: list[str] = []
            for at in range(0, len(pending), page):
                chunk = pending[at:at + page]
                # Polled by state alone; a record (with its spec) is read once, when finished.
                ended = [job_id for job_id, state
                         in zip(chunk, self.store.jobs.states_many(chunk), strict=True)
                         if state is None or state in ("done", "failed")]
                for job_id, record in zip(ended, self.store.jobs.get_many(ended), strict=True):
                    records[job_id] = record
                still += [job_id for job_id in chunk if job_id not in records]
            pending = still
            if not pending:
                return [records[job_id] for job_id in job_ids]
            if time.monotonic() >= deadline:
                raise WaitTimeoutError(
                    f"{len(pending)} of {len(records) + len(pending)} job(s) are not done "
                    f"after {timeout:g} s (first: {pending[0]}); check them later with "
                    "`rookhaven job ID`, and that workers run (`celery -A workers worker`)"
                )
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
        the time limit; fail those out of attempts with their last error."""
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
            alive=self.store.heartbeats.alive, limit=limit,
        )
        outcome: dict[str, list[str]] = {"requeue": [], "done": [], "failed": []}
        skipped = 0
        for job in stale:
            verdict = self.store.jobs.requeue(job, s.job_max_attempts)
            if verdict in outcome:
                outcome[verdict].append(job.id)
            else:
                skipped += 1
        self.dispatcher.send(outcome["requeue"], s.batch_size, QUEUE_RECOVERY)
        return SweepReport(requeued=outcome["requeue"], done=outcome["done"],
                           failed=outcome["failed"], skipped=skipped)
