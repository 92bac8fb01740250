"""What a verification produces: a verdict per stored result and a record per run."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

# match: the replay gave the stored bytes. mismatch: same engine, other bytes (tampering or
# nondeterminism). drift: made by another engine version or configuration (reported, no
# alarm). missing-corpus / missing-result / no-recipe: cannot be replayed at all.
Outcome = Literal["match", "mismatch", "drift", "missing-corpus", "missing-result", "no-recipe"]
ALARMS: frozenset[str] = frozenset({"mismatch", "missing-corpus", "missing-result", "no-recipe"})


class Verdict(BaseModel):
    """The outcome of replaying one stored result."""

    model_config = ConfigDict(frozen=True)

    key: str
    outcome: Outcome
    corpus_digest: str | None = None
    stored_engine: str | None = None
    current_engine: str | None = None
    where: str | None = Field(default=None, description="first differing field, e.g. hits[2].id")
    changed: bool | None = Field(default=None, description="for drift: whether bytes differ")
    detail: str = ""

    @property
    def alarm(self) -> bool:
        return self.outcome in ALARMS


class Selection(BaseModel):
    """Which stored results a run checks: given keys, all, or a seeded sample."""

    model_config = ConfigDict(frozen=True)

    keys: list[str] = []
    all: bool = False
    sample: int | None = None
    seed: str | None = None
    corpus: str | None = None
    stratify: Literal["none", "corpus", "age"] = "corpus"


class VerificationRun(BaseModel):
    """One verification run as recorded in the store: when, what was drawn, what was found."""

    model_config = ConfigDict(frozen=True)

    run_id: str
    started: float
    finished: float
    selection: Selection
    sample_seed: str | None
    keys: list[str]
    checked: int
    matched: int
    mismatched: int
    drift: int
    missing: int
    alarms: int
    verdicts: list[Verdict]

    @property
    def clean(self) -> bool:
        return self.alarms == 0
