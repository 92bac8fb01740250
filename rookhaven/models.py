"""Boundary types: what callers send and what Rookhaven returns, validated by pydantic.

Inside the core these are read as plain data; their JSON form (see core.canonical) is
the byte contract that audits replay.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    field_validator,
)

DEFAULT_SEED = "rookhaven-default"
DEFAULT_RECALL = 10


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)


def _absent(value: object) -> bool:
    return value is None


# An ``expansion`` that the JSON leaves out when absent, so the bytes of engines without
# query expansion stay what they were. A field-level exclusion, not a model serializer: a
# wrapping serializer runs Python around every model that has one, which doubled the cost
# of dumping a result (an MCP call dumps it twice, as structured and as text content).
_Expansion = Annotated[dict[str, Any] | None, Field(exclude_if=_absent)]


class Document(_Frozen):
    """One retrievable document: an id, its body text, optional named fields and metadata."""

    id: str = Field(min_length=1)
    text: str = ""
    fields: dict[str, str] = Field(default_factory=dict)
    metadata: dict[str, Any] = Field(default_factory=dict)

    @field_validator("id", mode="before")
    @classmethod
    def _id_is_string(cls, value: object) -> object:
        if not isinstance(value, str):
            raise ValueError(f"document id must be a string, got {type(value).__name__} {value!r}")
        return value


class RetrievalRequest(_Frozen):
    """A query, how many documents to return in all, and the seed that breaks every tie."""

    query: str = Field(min_length=1)
    recall_budget: int = Field(default=DEFAULT_RECALL, ge=1, alias="recallBudget")
    seed: str = DEFAULT_SEED
    decompose: bool = True

    @field_validator("query")
    @classmethod
    def _query_not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("query must contain some text")
        return value


class Engine(_Frozen):
    """The scoring semantics that produced a result; a new version may rank differently."""

    name: str
    version: str


class Contribution(_Frozen):
    """A document one subquery picked, with that subquery's score for it."""

    id: str
    score: float


class Subquery(_Frozen):
    """One need the query was split into, with its weight, budget and picks."""

    text: str
    terms: list[str]
    weight: int
    budget: int
    contributed: list[Contribution] = Field(default_factory=list)
    # Engines with query expansion (bm25@3): the feedback documents and weighted terms.
    expansion: _Expansion = None
    # Hybrid engines: the semantic weight used and each pick's lexical and semantic rank.
    fusion: _Expansion = None


class DroppedPart(_Frozen):
    """A piece of the query that did not become a subquery, and why."""

    text: str
    reason: str


class ScoredHit(_Frozen):
    """One returned document, its 1-based rank, its ranking score and the subqueries behind it."""

    id: str
    rank: int
    score: float
    subqueries: list[int]


class Audit(_Frozen):
    """Everything needed to explain and replay a result."""

    seed: str
    query: str
    recall_budget: int
    decompose: bool
    subqueries: list[Subquery]
    dropped: list[DroppedPart]
    backfill: list[Contribution]
    streams: dict[str, int]
    corpus_digest: str
    corpus_size: int
    engine: Engine
    config: dict[str, Any]
    config_digest: str
    # Engines with query expansion (bm25@3): the whole query's, which orders the merge.
    expansion: _Expansion = None
    # Hybrid engines: the whole query's fusion (which orders the merge), ranks per hit.
    fusion: _Expansion = None


class RetrievalResult(_Frozen):
    """The ranked hits and the audit record that explains them."""

    hits: list[ScoredHit]
    audit: Audit
