"""What the store hands back: job records, corpus entries, ledger events, violations.

Times are Unix seconds (float, UTC). These are boundary types for the front ends, so they
are pydantic models with JSON forms.
"""

from __future__ import annotations

from typing import Any, Literal

import orjson
from pydantic import BaseModel, ConfigDict

from ..core.engines import stored_engine
from ..models import RetrievalRequest

JobState = Literal["queued", "running", "done", "failed"]
STATES: tuple[JobState, ...] = ("queued", "running", "done", "failed")


class _Record(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class JobSpec(_Record):
    """Everything a worker needs to run a job: the request and references, never objects."""

    key: str
    request: RetrievalRequest
    corpus_digest: str
    provider: str
    params: dict[str, Any] = {}


class JobRecord(_Record):
    """One job's ledger entry; its id is its result key, so equal requests share a job."""

    id: str
    key: str
    state: JobState
    request: RetrievalRequest
    corpus_digest: str
    provider: str
    params: dict[str, Any]
    created: float
    updated: float
    enqueued: int
    attempts: int
    started: float | None = None
    finished: float | None = None
    # The worker instance that last received its message or claimed it (a queued job
    # may name one: delivered, not started).
    worker: str | None = None
    error: str | None = None

    @property
    def spec(self) -> JobSpec:
        return JobSpec(key=self.key, request=self.request, corpus_digest=self.corpus_digest,
                       provider=self.provider, params=self.params)

    @classmethod
    def from_hash(cls, raw: dict[bytes, bytes]) -> JobRecord:
        """Parse the Redis hash written by the job scripts."""
        text = {k.decode(): v.decode() for k, v in raw.items()}

        def when(name: str) -> float | None:
            return float(text[name]) if text.get(name) else None

        return cls(
            id=text["id"], key=text["key"], state=text["state"],
            request=RetrievalRequest.model_validate_json(text["request"]),
            corpus_digest=text["corpus"], provider=stored_engine(text["provider"]).ref,
            params=orjson.loads(text["params"]), created=float(text["created"]),
            updated=float(text["updated"]), enqueued=int(text["enqueued"]),
            attempts=int(text["attempts"]), started=when("started"),
            finished=when("finished"), worker=text.get("worker") or None,
            error=text.get("error") or None,
        )


class CorpusEntry(_Record):
    """A stored corpus as the registry knows it; ``name`` is None for an unnamed one."""

    digest: str
    name: str | None
    version: int | None
    added: float
    documents: int
    bytes: int


class LedgerEvent(_Record):
    """One state change of one job, in the order the store applied them."""

    id: str
    job: str
    event: str
    at: float
    detail: str = ""


class Violation(_Record):
    """Different bytes offered under an existing content key (never stored)."""

    id: str
    key: str
    job: str
    what: str
    at: float
