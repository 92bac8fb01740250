"""What a bulk re-ranking run is asked to do, and what it reports per query and in all."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

# Queries a chunk: its jobs, each query's target and (where none is stored) its baseline,
# fill one message of the default ROOKHAVEN_BATCH_SIZE (ADR 0060).
CHUNK = 250


class RerankSpec(BaseModel):
    """A re-ranking run's inputs; stored with the run so it can be resumed exactly."""

    model_config = ConfigDict(frozen=True)

    source: Literal["audits", "file"]
    # source=audits: which stored results to take the historical queries from.
    corpus: str | None = None
    since: float | None = None
    until: float | None = None
    limit: int | None = Field(default=None, ge=1)
    # source=file: the requests (JSON lines) and the corpus they were first run against.
    requests: list[dict[str, Any]] = []
    baseline: str | None = None
    # The target: another corpus digest and/or another provider configuration.
    target_corpus: str | None = None
    provider: str | None = None
    params: dict[str, Any] = {}
    chunk: int = Field(default=CHUNK, ge=1)


class RerankRow(BaseModel):
    """How one historical query's ranking changed."""

    model_config = ConfigDict(frozen=True)

    index: int
    query: str
    seed: str
    recall_budget: int
    old_key: str
    new_key: str | None
    old_corpus: str
    new_corpus: str
    status: str
    change: dict[str, Any] | None = None


class RerankCounts(BaseModel):
    """A run's counts and means over its queries: what the MCP server reports of it too."""

    model_config = ConfigDict(frozen=True)

    queries: int
    compared: int
    failed: int
    unchanged: int
    changed: int
    mean_overlap_at_k: float | None
    mean_kendall_tau: float | None
    mean_rbo: float | None
    documents_gained: int
    documents_lost: int
    max_displacement: int


class RerankSummary(RerankCounts):
    """The whole run in numbers."""

    run_id: str
