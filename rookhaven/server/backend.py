"""The seam between the MCP tools and whatever answers them: inline over a file, or the pipeline.

``InlineBackend`` ranks ROOKHAVEN_CORPUS_PATH in this process and needs no services (the
reference server's behaviour). The job tools need a store, so on this backend they say how
to get one. ``open_backend`` picks the pipeline backend when ROOKHAVEN_REDIS_URL is set.
Backend methods are synchronous and may block; the tools run them on worker threads.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from ..config import Settings
from ..core.engine import Retriever
from ..core.identity import result_key
from ..corpusfile import load_corpus
from ..errors import ConfigError, NotFoundError
from ..models import Audit, RetrievalRequest, RetrievalResult
from .outputs import CorporaOutput, CorpusInfo, JobOutput, Mode, VerifyOutput


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

    def retrieve(self, request: RetrievalRequest, corpus: str | None) -> Retrieval: ...
    def submit(self, request: RetrievalRequest, corpus: str | None) -> JobOutput: ...
    def job(self, job_id: str) -> JobOutput: ...
    def result(self, key: str) -> RetrievalResult: ...
    def audit(self, key: str) -> Audit: ...
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


def _stamp(path: Path) -> tuple[int, int] | None:
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return stat.st_mtime_ns, stat.st_size


class InlineBackend:
    """Ranks the file at ROOKHAVEN_CORPUS_PATH in-process; re-indexes it when the file changes."""

    def __init__(self, settings: Settings, reason: str = "ROOKHAVEN_REDIS_URL is not set") -> None:
        self._settings = settings
        self._reason = reason
        self._lock = threading.Lock()
        self._loaded: tuple[tuple[int, int] | None, Retriever] | None = None

    @property
    def _path(self) -> Path:
        if self._settings.corpus_path is None:
            raise ConfigError("no corpus configured: set ROOKHAVEN_CORPUS_PATH to a corpus file "
                              "(JSON array or JSON Lines)")
        return self._settings.corpus_path

    @property
    def name(self) -> str:
        """The default corpus's name: its file name without the extension."""
        return self._path.stem

    def retriever(self) -> Retriever:
        """The corpus indexed for the configured provider, loaded once per file version."""
        path = self._path
        with self._lock:
            stamp = _stamp(path)
            if self._loaded is None or stamp is None or self._loaded[0] != stamp:
                corpus = load_corpus(path, max_docs=self._settings.max_corpus_docs)
                self._loaded = (stamp, Retriever(corpus, self._settings.provider))
            return self._loaded[1]

    def _resolve(self, corpus: str | None) -> Retriever:
        retriever = self.retriever()
        if corpus is None or corpus in (self.name, retriever.corpus.digest):
            return retriever
        raise NotFoundError(f"unknown corpus {corpus!r}; this server has only {self.name!r} "
                            f"({retriever.corpus.digest}); see list_corpora")

    def retrieve(self, request: RetrievalRequest, corpus: str | None) -> Retrieval:
        retriever = self._resolve(corpus)
        return Retrieval(
            result=retriever.retrieve(request),
            result_key=result_key(request, retriever.corpus.digest, retriever.identity),
            mode="inline", reason=self._reason, corpus=self.name,
        )

    def corpora(self) -> CorporaOutput:
        retriever = self.retriever()
        return CorporaOutput(pipeline=False, corpora=[CorpusInfo(
            name=self.name, digest=retriever.corpus.digest, documents=len(retriever.corpus),
            default=True, source=str(self._path),
        )])

    def submit(self, request: RetrievalRequest, corpus: str | None) -> JobOutput:
        raise needs_pipeline("submit_retrieval")

    def job(self, job_id: str) -> JobOutput:
        raise needs_pipeline("get_job")

    def result(self, key: str) -> RetrievalResult:
        raise needs_pipeline("get_result")

    def audit(self, key: str) -> Audit:
        raise needs_pipeline("get_audit")

    def verify(self, key: str) -> VerifyOutput:
        raise needs_pipeline("verify_result")

    def close(self) -> None:
        self._loaded = None


def open_backend(settings: Settings) -> Backend:
    """The pipeline backend when ROOKHAVEN_REDIS_URL is set, else the inline one."""
    if settings.redis_url is None:
        return InlineBackend(settings)
    # Imported here so the no-services server never loads Celery or redis-py.
    from .pipeline import PipelineBackend

    return PipelineBackend.open(settings)
