"""The ports of the MCP server: what its tools need from a backend, and what one returns.

Backend methods are synchronous and may block; the tools run them on worker threads, but
for a ``retrieve`` the backend says ``answers_at_once``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from ..errors import ConfigError
from ..models import Audit, RetrievalRequest, RetrievalResult
from ..verification import Selection
from .outputs import CorporaOutput, JobOutput, LogProof, Mode, RunKind, RunOutput, VerifyOutput

# Called by a run's work as it goes: (done, total).
Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class Retrieval:
    """A result, its content key, and how it was produced (kept outside the result)."""

    result: RetrievalResult
    result_key: str
    mode: Mode
    reason: str
    corpus: str


@dataclass(frozen=True)
class PreparedRun:
    """A run that has been checked and given its id; ``work`` does it (blocking) and returns
    the finished run."""

    run_id: str
    kind: RunKind
    mode: Mode
    work: Callable[[Progress], RunOutput]
    asked_by: str | None = None  # the token that started it, shown while it runs


@dataclass(frozen=True)
class RerankTarget:
    """Which historical queries to re-rank, and against what."""

    corpus: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    limit: int | None = None
    to_corpus: str | None = None
    to_engine: str | None = None
    params: dict[str, Any] | None = None


@dataclass(frozen=True)
class CorpusData:
    """A corpus's description and its documents as canonical JSON lines."""

    name: str
    digest: str
    documents: int
    lines: bytes


class Backend(Protocol):
    """What the MCP tools need; every method may raise a RookhavenError."""

    def retrieve(self, request: RetrievalRequest, corpus: str | None,
                 engine: str | None = None, asked_by: str | None = None) -> Retrieval: ...
    def answers_at_once(self, corpus: str | None, engine: str | None = None) -> bool: ...
    def submit(self, request: RetrievalRequest, corpus: str | None,
               engine: str | None = None, asked_by: str | None = None) -> JobOutput: ...
    def job(self, job_id: str) -> JobOutput: ...
    def result(self, key: str) -> RetrievalResult: ...
    def audit(self, key: str) -> Audit: ...
    def proof(self, key: str) -> LogProof | None: ...
    def verify(self, key: str) -> VerifyOutput: ...
    def corpora(self) -> CorporaOutput: ...
    def corpus(self, ref: str) -> CorpusData: ...
    def result_keys(self, offset: int, count: int) -> list[str]: ...
    def start_verification(self, selection: Selection,
                           asked_by: str | None = None) -> PreparedRun: ...
    def start_rerank(self, target: RerankTarget,
                     asked_by: str | None = None) -> PreparedRun: ...
    def recorded_run(self, run_id: str) -> RunOutput: ...
    def report(self, run_id: str) -> bytes: ...
    def close(self) -> None: ...


def needs_pipeline(tool: str) -> ConfigError:
    """The error a job tool gives when this server has no store to keep jobs in."""
    return ConfigError(
        f"{tool} needs the job pipeline, which is not configured: set ROOKHAVEN_REDIS_URL "
        "and start workers (celery -A workers worker). Without it this server answers "
        "only retrieve and list_corpora, inline over ROOKHAVEN_CORPUS_PATH, and its corpus "
        "resource"
    )
