"""The backend over the job pipeline: jobs and stored results, replay, and a ``retrieve``
that goes through the workers when any are alive and ranks in this server otherwise.

Workers prove they are alive with heartbeat keys (rookhaven.store.heartbeats); with none,
queueing a job would only make the caller wait for the sweeper, so ``retrieve`` runs the
job here, through the same ledger and store, and says so in its metadata. Either way the
result bytes are the same, and what was served is stored and logged.
``verify_result`` is the nightly verifier's replay (rookhaven.verification), one key at a time.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from itertools import islice

from ..config import Settings
from ..errors import (
    JobFailedError,
    LimitError,
    NotFoundError,
    RookhavenError,
    WaitTimeoutError,
)
from ..metrics import MCP_REFUSALS
from ..models import Audit, RetrievalRequest, RetrievalResult
from ..pipeline import Executor, Pipeline, RetrieverCache, open_pipeline
from ..pipeline.inline import InlineDispatcher
from ..store.records import JobRecord
from ..transparency import checkpoints
from ..verification import Replayer, Selection, check_keys
from .auditing import AuditRuns
from .defaults import LATEST
from .inline import InlineBackend
from .outputs import CorporaOutput, CorpusInfo, JobOutput, LogProof, RunOutput, VerifyOutput
from .ports import CorpusData, PreparedRun, RerankTarget, Retrieval


def job_output(record: JobRecord) -> JobOutput:
    """A job record as the get_job tool shows it."""
    return JobOutput(job_id=record.id, result_key=record.key, state=record.state,
                     attempts=record.attempts, error=record.error,
                     created_at=record.created, updated_at=record.updated,
                     asked_by=record.asked_by)


def _stored(read: Callable[[str], bytes], key: str, what: str) -> bytes:
    """``read(key)``, with a missing result explained in the MCP tools' own terms."""
    try:
        return read(key)
    except NotFoundError:
        raise NotFoundError(f"no {what} stored under {key!r}; a job's result appears once "
                            "get_job says the job is done") from None


class PipelineBackend:
    """Answers the tools from the store and the workers behind ROOKHAVEN_REDIS_URL."""

    def __init__(self, pipeline: Pipeline, settings: Settings,
                 wait: float | None = None) -> None:
        self.pipeline = pipeline
        self.store = pipeline.store
        self.settings = settings
        # How long retrieve waits for a worker before giving the job id back as an error (s).
        self.wait = settings.task_time_limit if wait is None else wait
        # One index cache for replays and inline ranking; the lock keeps two threads from
        # building the same index at once.
        self._indexes = RetrieverCache(self.store.corpora.stream, settings.index_cache_size)
        self._replayer = Replayer(self.store, settings, self._indexes)
        self._lock = threading.Lock()
        self._file = InlineBackend(settings, reason="corpus not in the store; ranked the "
                                   "ROOKHAVEN_CORPUS_PATH file in this server")
        self._audits = AuditRuns(pipeline, settings)
        # Where retrieve runs a job when no worker is alive: this store, this index cache.
        self._here = Pipeline(self.store, InlineDispatcher(Executor(
            self.store, settings, cache=self._indexes, job_lines=logging.DEBUG)), settings)

    @classmethod
    def open(cls, settings: Settings) -> PipelineBackend:
        """Over ROOKHAVEN_REDIS_URL; no I/O yet, so a Redis that is down shows per call."""
        return cls(open_pipeline(settings), settings)

    def workers_alive(self) -> bool:
        """Whether any worker's heartbeat key is present."""
        return self.store.heartbeats.any_alive()

    def _from_file(self, corpus: str | None) -> bool:
        return self.settings.corpus_path is not None and corpus in (None, self._file.name)

    def _default(self) -> str:
        """What a request naming no corpus means: the ROOKHAVEN_CORPUS_PATH file's content
        (by digest) when one is set, else the store's latest (rookhaven.server.defaults)."""
        if self.settings.corpus_path is None:
            return LATEST
        return self._file.retriever().corpus.digest

    def answers_at_once(self, corpus: str | None, engine: str | None = None) -> bool:
        """Never: every retrieval here reads or writes the store."""
        return False

    def retrieve(self, request: RetrievalRequest, corpus: str | None,
                 engine: str | None = None, asked_by: str | None = None) -> Retrieval:
        ref = corpus or self._default()
        try:
            digest = self.store.corpora.resolve(ref)
        except NotFoundError:
            if self._from_file(corpus):
                return self._file.retrieve(request, corpus, engine)
            raise
        if self.workers_alive():
            return self._through_workers(request, ref, digest, engine, asked_by)
        # No worker: the job runs here, through the same ledger and store as on a worker
        # (pipeline.inline), so what is served is stored, logged and replayable like any
        # result. One at a time: the jobs share this server's index cache.
        with self._lock:
            job = self._here.submit(request, digest, engine, asked_by=asked_by)
            if job.cached:
                return Retrieval(result=self.result(job.result_key), result_key=job.result_key,
                                 mode="pipeline", reason="result already stored", corpus=ref)
            record = self.pipeline.job(job.job_id)
            if record.state in ("queued", "running"):  # recorded earlier, left by its workers
                self._here.dispatcher.send([job.job_id], 1)
                record = self.pipeline.job(job.job_id)
        if record.state != "done":  # failed here, or a retry waits for the sweeper
            raise JobFailedError(f"job {record.id} did not finish in this server "
                                 f"({record.state}): {record.error}")
        return Retrieval(result=self.result(job.result_key), result_key=job.result_key,
                         mode="inline", reason="no live worker; ranked the stored corpus in "
                         "this server and stored it as a worker would", corpus=ref)

    def _through_workers(self, request: RetrievalRequest, ref: str, digest: str,
                         engine: str | None, asked_by: str | None) -> Retrieval:
        job = self.pipeline.submit(request, digest, engine, asked_by=asked_by)
        if job.state != "done":
            try:
                record = self.pipeline.wait(job.job_id, self.wait)
            except WaitTimeoutError:
                raise WaitTimeoutError(
                    f"job {job.job_id} is not done after {self.wait:g} s; poll get_job with "
                    "that id and read it with get_result once it is done") from None
            if record.state == "failed":
                raise JobFailedError(f"job {record.id} failed after {record.attempts} "
                                     f"attempt(s): {record.error}")
        reason = "result already stored" if job.cached else "a worker ranked it"
        return Retrieval(result=self.result(job.result_key), result_key=job.result_key,
                         mode="pipeline", reason=reason, corpus=ref)

    def submit(self, request: RetrievalRequest, corpus: str | None,
               engine: str | None = None, asked_by: str | None = None) -> JobOutput:
        if asked_by is not None:
            cap = self.settings.mcp_open_jobs_per_token
            if self.store.askers.open_jobs(asked_by, cap) >= cap:
                MCP_REFUSALS.labels(asked_by, "open-jobs").inc()
                raise LimitError(
                    f"token {asked_by!r} has {cap} jobs queued or running, its limit "
                    "(ROOKHAVEN_MCP_OPEN_JOBS_PER_TOKEN): submit again once some are done "
                    "(get_job), or ask the operator for a higher limit")
        try:
            job = self.pipeline.submit(request, corpus or self._default(), engine,
                                       asked_by=asked_by)
        except NotFoundError:
            if corpus is None and self.settings.corpus_path is not None:
                path = self.settings.corpus_path
                raise NotFoundError(
                    f"the default corpus, the ROOKHAVEN_CORPUS_PATH file {path}, is not in the "
                    f"store, so no worker can rank it: add it with `rookhaven corpus add "
                    f"{path}`, or name a stored corpus (see list_corpora)") from None
            raise
        # Read back from the record, so submit_retrieval says what get_job would (times,
        # attempts). A result answered from the store may have outlived its record.
        try:
            return job_output(self.pipeline.job(job.job_id))
        except NotFoundError:
            return JobOutput(job_id=job.job_id, result_key=job.result_key, state=job.state)

    def job(self, job_id: str) -> JobOutput:
        return job_output(self.pipeline.job(job_id))

    def result(self, key: str) -> RetrievalResult:
        return RetrievalResult.model_validate_json(_stored(self.pipeline.result, key, "result"))

    def audit(self, key: str) -> Audit:
        return Audit.model_validate_json(_stored(self.pipeline.audit, key, "audit"))

    def proof(self, key: str) -> LogProof | None:
        """The result's inclusion proof against the latest checkpoint; None while no
        checkpoint covers it yet (the log signs one every ROOKHAVEN_CHECKPOINT_INTERVAL)."""
        if checkpoints.latest(self.store) is None:
            return None
        try:
            found = checkpoints.inclusion(self.store, key)
        except NotFoundError:
            return None
        data = found.as_json()
        return LogProof(shard=data["shard"], leaf_index=data["leaf_index"],
                        tree_size=data["tree_size"],
                        leaf=data["leaf"], leaf_hash=data["leaf_hash"], proof=data["proof"],
                        root=data["root"], checkpoint=data["checkpoint"])

    def verify(self, key: str) -> VerifyOutput:
        """The nightly verifier's replay of one key, so both always agree on a verdict."""
        with self._lock:
            verdict = self._replayer.replay(key)
        if verdict.outcome == "missing-result" and not self.store.ever_stored(key):
            raise NotFoundError(verdict.detail)  # a key never stored: not an erasure
        return VerifyOutput(result_key=key, match=verdict.outcome == "match",
                            outcome=verdict.outcome, alarm=verdict.alarm, where=verdict.where,
                            stored_engine=verdict.stored_engine,
                            current_engine=verdict.current_engine, detail=verdict.detail)

    def corpora(self) -> CorporaOutput:
        entries = self.store.corpora.entries()
        file_wins = self.settings.corpus_path is not None
        latest = self.store.corpora.resolve(LATEST) if entries and not file_wins else None
        listed = [CorpusInfo(name=f"{e.name}@{e.version}" if e.name else e.digest,
                             digest=e.digest, documents=e.documents,
                             default=e.digest == latest, source="store") for e in entries]
        if self.settings.corpus_path is not None:
            try:
                (file,) = self._file.corpora().corpora
            except RookhavenError:
                file = CorpusInfo(name=self._file.name, source=str(self.settings.corpus_path))
            listed.append(file.model_copy(update={"default": True}))
        return CorporaOutput(corpora=listed, pipeline=True)

    def corpus(self, ref: str) -> CorpusData:
        """A stored corpus (or the ROOKHAVEN_CORPUS_PATH file) as canonical JSON lines."""
        try:
            digest = self.store.corpora.resolve(ref)
        except NotFoundError:
            if self._from_file(ref):
                return self._file.corpus(ref)
            raise
        names = [f"{e.name}@{e.version}" for e in self.store.corpora.entries()
                 if e.digest == digest and e.name]
        corpus = self.store.corpora.load(digest)
        return CorpusData(name=names[-1] if names else digest, digest=digest,
                          documents=len(corpus), lines=b"".join(corpus.canonical_lines()))

    def result_keys(self, offset: int, count: int) -> list[str]:
        """Stored result keys, oldest first, from ``offset``."""
        return [key for key, _ in islice(self.store.audits.scan(), offset, offset + count)]

    def start_verification(self, selection: Selection,
                           asked_by: str | None = None) -> PreparedRun:
        check_keys(self.store, selection.keys)
        return self._audits.verification(selection, asked_by)

    def start_rerank(self, target: RerankTarget, asked_by: str | None = None) -> PreparedRun:
        return self._audits.rerank(target, self.workers_alive(), asked_by)

    def recorded_run(self, run_id: str) -> RunOutput:
        return self._audits.recorded(run_id)

    def report(self, run_id: str) -> bytes:
        return self._audits.report(run_id)

    def close(self) -> None:
        self._file.close()
        self.pipeline.dispatcher.close()
        self.store.close()
