"""The auditors' two jobs for the pipeline backend: verification and re-ranking runs, prepared
(checked, given an id) at once and then worked on a thread by the run board.

They are the CLI's machinery (``rookhaven verify``, ``rookhaven rerank``): the Verifier
replays in this server like the CLI does; re-ranking sends its jobs to the workers when one
is alive, and runs them in this server through the same ledger otherwise.
"""

from __future__ import annotations

from ..config import Settings
from ..core.canonical import canonical_bytes
from ..core.engines import engine_spec
from ..errors import InputError, NotFoundError
from ..pipeline import Pipeline
from ..pipeline.inline import inline_pipeline
from ..rerank import Reranker, RerankSpec, RerankSummary, check_target, summarize
from ..store import Store
from ..verification import Selection, VerificationRun, Verifier
from ..verification.logcheck import pinned_from
from ..verification.verifier import run_id_at
from .outputs import Alarm, RerankOutcome, RunOutput, VerificationSummary
from .ports import PreparedRun, Progress, RerankTarget

ALARMS_LISTED = 100


def page_path(run_id: str) -> str:
    """Where the MCP HTTP server serves a run's page (server.http)."""
    return f"/runs/{run_id}.html"


def report_uri(run_id: str) -> str:
    """Where a finished run's full report is read (an MCP resource)."""
    return f"rookhaven://runs/{run_id}/report"


def verification_output(run: VerificationRun) -> RunOutput:
    """A recorded verification run as get_run shows it."""
    alarmed = [Alarm(key=v.key, outcome=v.outcome, where=v.where, detail=v.detail)
               for v in run.verdicts if v.alarm][:ALARMS_LISTED]
    return RunOutput(
        run_id=run.run_id, kind="verification", state="done", done=run.checked,
        total=run.checked, mode="inline", started_at=run.started, finished_at=run.finished,
        report=report_uri(run.run_id), page=page_path(run.run_id),
        asked_by=[run.asked_by] if run.asked_by else [],
        verification=VerificationSummary(
            checked=run.checked, matched=run.matched, mismatched=run.mismatched,
            drift=run.drift, missing=run.missing, alarms=run.alarms,
            sample_seed=run.sample_seed, alarmed=alarmed))


def rerank_outcome(summary: RerankSummary) -> RerankOutcome:
    return RerankOutcome.model_validate(summary.model_dump(exclude={"run_id"}))


class AuditRuns:
    """Verification and re-ranking runs over one store."""

    def __init__(self, pipeline: Pipeline, settings: Settings) -> None:
        self.pipeline = pipeline
        self.store: Store = pipeline.store
        self.settings = settings

    def verification(self, selection: Selection, asked_by: str | None = None) -> PreparedRun:
        """A verification of ``selection``: corpus and pinned checkpoint checked now; the
        record names the token that ``asked_by`` it."""
        if selection.corpus is not None:
            selection = selection.model_copy(
                update={"corpus": self.store.corpora.resolve(selection.corpus)})
        pinned = pinned_from(self.settings)
        run_id = run_id_at(self.store.now())

        def work(progress: Progress) -> RunOutput:
            run = Verifier(self.store, self.settings).run(selection, progress=progress,
                                                          pinned=pinned, run_id=run_id,
                                                          asked_by=asked_by)
            return verification_output(run)
        return PreparedRun(run_id=run_id, kind="verification", mode="inline", work=work,
                           asked_by=asked_by)

    def rerank(self, target: RerankTarget, workers_alive: bool,
               asked_by: str | None = None) -> PreparedRun:
        """A re-ranking of ``target``: references resolved and the run recorded now, with
        the token that ``asked_by`` it."""
        if target.to_corpus is None and target.to_engine is None:
            raise InputError("nothing to compare against: give toCorpus and/or toEngine")
        provider = engine_spec(target.to_engine).ref if target.to_engine else None
        since = target.since.timestamp() if target.since else None
        until = target.until.timestamp() if target.until else self.store.now()
        check_target(provider, target.params or {}, since, until,
                     names=("toEngine", "params"))
        resolve = self.store.corpora.resolve
        spec = RerankSpec(
            source="audits", corpus=resolve(target.corpus) if target.corpus else None,
            since=since, until=until,
            limit=target.limit, target_corpus=resolve(target.to_corpus) if target.to_corpus
            else None, provider=provider, params=target.params or {})
        pipeline = self.pipeline if workers_alive else inline_pipeline(self.store, self.settings)
        reranker = Reranker(pipeline, wait_timeout=self.settings.task_time_limit)
        run_id = reranker.start(spec)
        if asked_by is not None:
            self.store.reranks.note_asker(run_id, asked_by)

        def work(progress: Progress) -> RunOutput:
            summary = summarize(run_id, reranker.run(run_id, progress=progress))
            self.store.reranks.set_summary(run_id, canonical_bytes(summary))
            return self.recorded(run_id)
        return PreparedRun(run_id=run_id, kind="rerank",
                           mode="pipeline" if workers_alive else "inline", work=work,
                           asked_by=asked_by)

    def recorded(self, run_id: str) -> RunOutput:
        """A run as the store has it: finished verification runs, re-ranking runs."""
        try:
            return self._recorded(run_id)
        except NotFoundError:
            raise NotFoundError(f"no run {run_id!r} on this server or in the store; "
                                "start_verification and start_rerank return run ids") from None

    def _recorded(self, run_id: str) -> RunOutput:
        if run_id.startswith("verify-"):
            return verification_output(
                VerificationRun.model_validate_json(self.store.verifications.get(run_id)))
        self.store.reranks.spec(run_id)  # NotFoundError for an unknown run
        finished = self.store.reranks.finished(run_id)
        done = sum(len(rows.splitlines()) for rows in finished.values())
        summary = self.store.reranks.summary(run_id)
        askers = self.store.reranks.askers(run_id)
        if summary is None:
            return RunOutput(run_id=run_id, kind="rerank", state="running", done=done,
                             total=self.store.reranks.total(run_id), page=page_path(run_id),
                             asked_by=askers)
        return RunOutput(run_id=run_id, kind="rerank", state="done", done=done,
                         total=self.store.reranks.total(run_id), report=report_uri(run_id),
                         page=page_path(run_id), asked_by=askers,
                         rerank=rerank_outcome(RerankSummary.model_validate_json(summary)))

    def report(self, run_id: str) -> bytes:
        """A finished run's full report: the verification record (JSON), or the re-ranking
        rows (JSON lines, in query order)."""
        if run_id.startswith("verify-"):
            return self.store.verifications.get(run_id)
        self.store.reranks.spec(run_id)
        if self.store.reranks.summary(run_id) is None:
            raise NotFoundError(f"re-ranking run {run_id!r} has not finished; its report "
                                "appears once get_run says it is done")
        finished = self.store.reranks.finished(run_id)
        return b"".join(finished[i] for i in sorted(finished))

