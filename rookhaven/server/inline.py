"""The backend with no services: ranks ROOKHAVEN_CORPUS_PATH in this process.

It behaves like the reference server. The job tools need a store, so here they say how to
get one.
"""

from __future__ import annotations

import os
import threading
from functools import cached_property
from pathlib import Path

from ..config import Settings
from ..core.corpus import Corpus
from ..core.engine import Retriever
from ..core.engines import engine_spec
from ..core.identity import result_key
from ..errors import ConfigError, NotFoundError, RookhavenError
from ..models import Audit, RetrievalRequest, RetrievalResult
from ..verification import Selection
from .outputs import CorporaOutput, CorpusInfo, JobOutput, LogProof, RunOutput, VerifyOutput
from .ports import CorpusData, PreparedRun, RerankTarget, Retrieval, needs_pipeline

# Up to this many documents a built index ranks on the event loop, not on a worker thread
# (``answers_at_once``, ADR 0042): the hop cost ~340 us of CPU a call, more than ranking a
# small corpus, and a request over 10,000 documents takes 0.3-1.4 ms, about what the hop
# costs a concurrent caller anyway.
ON_LOOP_DOCS = 10_000


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
        # Engine ref -> (the default retriever it was built beside, its own retriever).
        self._others: dict[str, tuple[Retriever, Retriever]] = {}

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
        built = self._built()
        if built is not None:
            return built  # no lock, which a build for another engine may hold
        with self._lock:
            path = self._path
            stamp = _stamp(path)
            if self._loaded is None or stamp is None or self._loaded[0] != stamp:
                corpus = self._settings.load_corpus(path)
                self._loaded = (stamp, Retriever(corpus, self._settings.engine))
            return self._loaded[1]

    def _built(self) -> Retriever | None:
        """The default engine's index if it is built and its file unchanged since."""
        loaded = self._loaded
        if loaded is None or loaded[0] is None or loaded[0] != _stamp(self._path):
            return None
        return loaded[1]

    def _names(self, retriever: Retriever, corpus: str | None) -> bool:
        """Whether ``corpus`` (None: the default) is the file's corpus, by name or digest."""
        return corpus in (None, self.name, retriever.corpus.digest)

    def _ref(self, engine: str | None) -> str:
        """``engine``'s NAME@VERSION (None: the configured engine); a bad name raises."""
        return engine_spec(engine).ref if engine else self._default_ref

    @cached_property
    def _default_ref(self) -> str:
        return engine_spec(self._settings.engine).ref

    def answers_at_once(self, corpus: str | None, engine: str | None = None) -> bool:
        """Whether ``retrieve`` would rank at once, taking no lock: the file unchanged since
        its index was built, for the default engine, with at most ON_LOOP_DOCS documents."""
        built = self._built()
        if built is None or len(built.corpus) > ON_LOOP_DOCS or not self._names(built, corpus):
            return False
        try:
            return self._ref(engine) == self._ref(None)
        except RookhavenError:
            return False  # ``retrieve`` says what is wrong with it

    def _resolve(self, corpus: str | None, engine: str | None = None) -> Retriever:
        retriever = self.retriever()
        if not self._names(retriever, corpus):
            raise NotFoundError(f"unknown corpus {corpus!r}; this server has only "
                                f"{self.name!r} ({retriever.corpus.digest}); see list_corpora")
        ref = self._ref(engine)
        if ref == self._ref(None):
            return retriever
        with self._lock:  # another engine over the same loaded corpus, built once
            if self._others.get(ref, (None,))[0] is not retriever:
                self._others[ref] = (retriever, Retriever(_whole(retriever), ref))
            return self._others[ref][1]

    def retrieve(self, request: RetrievalRequest, corpus: str | None,
                 engine: str | None = None, asked_by: str | None = None) -> Retrieval:
        retriever = self._resolve(corpus, engine)
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

    def corpus(self, ref: str) -> CorpusData:
        """The file's corpus, by its name or digest, as canonical JSON lines."""
        corpus = _whole(self._resolve(ref))
        return CorpusData(name=self.name, digest=corpus.digest, documents=len(corpus),
                          lines=b"".join(corpus.canonical_lines()))

    def result_keys(self, offset: int, count: int) -> list[str]:
        return []  # nothing is stored without the pipeline

    def start_verification(self, selection: Selection,
                           asked_by: str | None = None) -> PreparedRun:
        raise needs_pipeline("start_verification")

    def start_rerank(self, target: RerankTarget, asked_by: str | None = None) -> PreparedRun:
        raise needs_pipeline("start_rerank")

    def recorded_run(self, run_id: str) -> RunOutput:
        raise needs_pipeline("get_run")

    def report(self, run_id: str) -> bytes:
        raise needs_pipeline("a run report")

    def submit(self, request: RetrievalRequest, corpus: str | None,
               engine: str | None = None, asked_by: str | None = None) -> JobOutput:
        raise needs_pipeline("submit_retrieval")

    def job(self, job_id: str) -> JobOutput:
        raise needs_pipeline("get_job")

    def result(self, key: str) -> RetrievalResult:
        raise needs_pipeline("get_result")

    def audit(self, key: str) -> Audit:
        raise needs_pipeline("get_audit")

    def proof(self, key: str) -> LogProof | None:
        raise needs_pipeline("get_result")

    def verify(self, key: str) -> VerifyOutput:
        raise needs_pipeline("verify_result")

    def close(self) -> None:
        self._loaded = None


def _whole(retriever: Retriever) -> Corpus:
    """The corpus ``retriever`` indexed: this server loads files whole, never streamed."""
    corpus = retriever.corpus
    assert isinstance(corpus, Corpus)
    return corpus
