"""What a verification produces: a verdict per stored result and a record per run."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

# match: the engine the audit names, replayed from the audit's recipe, gave the stored bytes
# under the stored key. mismatch: other bytes (tampering or nondeterminism). wrong-key: the
# recipe does not lead to the key the bytes are stored under (a result moved or rewritten
# for another request). unreplayable: made by an engine this install lacks (install a
# Rookhaven that has it). missing-corpus / missing-result / no-recipe: cannot be replayed.
# nothing-checked / results-missing: the store holds no result to check, or fewer than its
# counters or its log say were ever stored (a Redis restarted empty, a partial restore).
# drift is no longer produced (every released engine stays installed); old run records
# may still count it.
# The log checks (with a pinned checkpoint): bad-signature (a checkpoint not signed by the
# pinned key), log-inconsistent (today's log does not extend the pinned tree: rewritten or
# truncated), erased (a logged result is gone), rewritten (a logged result's bytes differ
# from the logged hashes), unlogged (a stored result the log never saw).
Outcome = Literal["match", "mismatch", "wrong-key", "unreplayable", "drift", "missing-corpus",
                  "missing-result", "no-recipe", "bad-signature", "log-inconsistent",
                  "erased", "rewritten", "unlogged", "nothing-checked", "results-missing"]
ALARMS: frozenset[str] = frozenset({"mismatch", "wrong-key", "unreplayable", "missing-corpus",
                                    "missing-result", "no-recipe", "bad-signature",
                                    "log-inconsistent", "erased", "rewritten", "unlogged",
                                    "nothing-checked", "results-missing"})


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

    @property
    def everything(self) -> bool:
        """Whether it covers every stored result (of its corpus, if it names one)."""
        return not self.keys and (self.all or self.sample is None)


class VerificationRun(BaseModel):
    """One verification run as recorded in the store: when, what was drawn, what was found."""

    model_config = ConfigDict(frozen=True)

    run_id: str
    started: float
    finished: float
    selection: Selection
    # The MCP token that started it (the trail of who asked; None: the CLI or the beat).
    asked_by: str | None = None
    sample_seed: str | None
    keys: list[str]
    checked: int
    matched: int
    mismatched: int
    drift: int
    missing: int
    alarms: int
    # Every verdict but the matches (ADR 0031): a run over millions of results stays one
    # small record. Records made before 2026-12-03 hold the matches too.
    verdicts: list[Verdict]
    # How many results each engine replayed to the stored bytes (absent in older records).
    matched_by_engine: dict[str, int] = {}
    # The leaves the log mirror held when the log was checked against it (None: no mirror).
    mirror_leaves: int | None = None

    @property
    def clean(self) -> bool:
        return self.alarms == 0
