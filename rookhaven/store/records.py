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
# The fields of a job's state string, in order (store.scripts).
STATE_FIELDS = ("state", "attempts", "enqueued", "created", "updated", "started", "finished",
                "worker", "claim")


def state_fields(state: bytes) -> dict[str, str]:
    """A job's state string (store.scripts) by field name."""
    return dict(zip(STATE_FIELDS, state.decode().split("|", len(STATE_FIELDS) - 1),
                    strict=True))


def state_name(state: bytes) -> str:
    """The first field of a job's state string, its state ('queued', 'done', ...): what a
    poll reads, a fifth of ``state_fields``'s cost."""
    return state.partition(b"|")[0].decode()


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
    # The MCP tokens that submitted it, in the order each first did (store.askers): the
    # trail of who asked, outside the result's bytes.
    asked_by: list[str] = []

    @property
    def spec(self) -> JobSpec:
        return JobSpec(key=self.key, request=self.request, corpus_digest=self.corpus_digest,
                       provider=self.provider, params=self.params)

    @classmethod
    def from_fields(cls, job_id: str, spec: bytes, state: bytes, error: bytes | None,
                    askers: bytes | None = None) -> JobRecord:
        """Parse a job's spec, state string and error as the job scripts write them, and its
        askers as store.askers does."""
        values = state_fields(state)
        recipe = orjson.loads(spec)

        def when(name: str) -> float | None:
            return float(values[name]) if values[name] else None

        return cls(
            id=job_id, key=job_id, state=values["state"],
            request=RetrievalRequest.model_validate(recipe["request"]),
            corpus_digest=recipe["corpus"], provider=stored_engine(recipe["provider"]).ref,
            params=recipe["params"], created=float(values["created"]),
            updated=float(values["updated"]), enqueued=int(values["enqueued"]),
            attempts=int(values["attempts"]), started=when("started"),
            finished=when("finished"), worker=values["worker"] or None,
            error=error.decode() if error else None,
            asked_by=askers.decode().split(",") if askers else [],
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
