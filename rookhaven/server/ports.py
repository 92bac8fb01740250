"""The ports of the MCP server: what its tools need from a backend, and what one returns.

Backend methods are synchronous and may block; the tools run them on worker threads.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from ..errors import ConfigError
from ..models import Audit, RetrievalRequest, RetrievalResult
from .outputs import CorporaOutput, JobOutput, LogProof, Mode, VerifyOutput


@dataclass(frozen=True)
class Retrieval:
    """A result, its content key, and how it was produced (kept outside the result)."""

    result: RetrievalResult
    result_key: str
    mode: Mode
    reason: str
    corpus: str


class Backend(Protocol):
    """What the MCP tools need; every method may raise a RookhavenError."""

    def retrieve(self, request: RetrievalRequest, corpus: str | None,
                 engine: str | None = None) -> Retrieval: ...
    def submit(self, request: RetrievalRequest, corpus: str | None,
               engine: str | None = None) -> JobOutput: ...
    def job(self, job_id: str) -> JobOutput: ...
    def result(self, key: str) -> RetrievalResult: ...
    def audit(self, key: str) -> Audit: ...
    def proof(self, key: str) -> LogProof | None: ...
    def verify(self, key: str) -> VerifyOutput: ...
    def corpora(self) -> CorporaOutput: ...
    def close(self) -> None: ...


def needs_pipeline(tool: str) -> ConfigError:
    """The error a job tool gives when this server has no store to keep jobs in."""
    return ConfigError(
        f"{tool} needs the job pipeline, which is not configured: set ROOKHAVEN_REDIS_URL "
        "and start workers (celery -A workers worker). Without it this server answers "
        "only retrieve and list_corpora, inline over ROOKHAVEN_CORPUS_PATH"
    )
