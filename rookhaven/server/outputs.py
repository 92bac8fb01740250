"""What each MCP tool returns: pydantic models published as output schemas (structuredContent).

Field names are snake_case like the canonical result they carry, so a client reads one
vocabulary. Anything about *how* a result was produced (mode, timing) lives beside the
result, never inside it: the result's canonical bytes stay exactly what an audit replays.
"""

from __future__ import annotations

from typing import Literal

import orjson
from mcp_types import CallToolResult, TextContent
from pydantic import BaseModel, Field

from ..models import Audit, RetrievalResult
from ..rerank.models import RerankCounts

Mode = Literal["inline", "pipeline"]
JobState = Literal["queued", "running", "done", "failed"]


class RunInfo(BaseModel):
    """How a retrieve call was answered; not part of the result's canonical bytes."""

    mode: Mode = Field(description="inline: ranked in this process; pipeline: by a worker")
    reason: str = Field(description="why this mode was used")
    corpus: str = Field(description="the corpus name or reference the request resolved to")
    elapsed_ms: float = Field(description="wall time of the call in this server (ms)")


class RetrieveOutput(RetrievalResult):
    """The result itself (hits and audit, as the reference server returns them), with its
    content key and how it was produced beside them; only hits and audit are canonical bytes."""

    result_key: str = Field(description="content address of the result's canonical bytes")
    metadata: RunInfo


class JobOutput(BaseModel):
    """A job's state; ``result_key`` names where its result is (or will be) stored."""

    job_id: str
    result_key: str
    state: JobState
    attempts: int = 0
    error: str | None = None
    created_at: float | None = Field(default=None, description="Unix time (s)")
    updated_at: float | None = Field(default=None, description="Unix time (s)")
    asked_by: list[str] = Field(default_factory=list, description=(
        "the tokens (by name) that submitted it over MCP HTTP, first first; empty where only "
        "the CLI, stdio or a run did"))


class LogProof(BaseModel):
    """That the transparency log includes a result: its leaf and an RFC 6962 inclusion proof
    against a signed checkpoint (hashes in base64)."""

    shard: int = Field(default=0, description="the log shard whose tree holds the leaf (0 in "
                                              "a store of one log)")
    leaf_index: int
    tree_size: int
    leaf: str = Field(description="the logged leaf: key, result and audit sha256, corpus, "
                                  "engine, time stored")
    leaf_hash: str
    proof: list[str]
    root: str = Field(description="the root of that shard's tree, as the checkpoint signs it")
    checkpoint: str = Field(description="the C2SP signed checkpoint note (a checkpoint set "
                                        "when the log is sharded) the proof is against")


class ResultOutput(RetrievalResult):
    """A stored result read back by its key, shaped like retrieve's (hits and audit at the top
    level), with its inclusion proof when the log has a checkpoint covering it."""

    result_key: str
    proof: LogProof | None = None


class AuditOutput(BaseModel):
    """The audit record of a stored result, with the same inclusion proof."""

    result_key: str
    audit: Audit
    proof: LogProof | None = None


class VerifyOutput(BaseModel):
    """The verifier's verdict on replaying one stored result (rookhaven.verification)."""

    result_key: str
    match: bool = Field(description="true when the replay gave the stored bytes")
    outcome: str = Field(description="match, mismatch, wrong-key (stored under another "
                                     "request's key), unreplayable (made by an engine this "
                                     "install lacks), missing-corpus or no-recipe")
    alarm: bool = Field(description="true when an operator should look")
    where: str | None = Field(default=None, description="first differing field, e.g. hits[2].id")
    stored_engine: str | None = None
    current_engine: str | None = None
    detail: str = ""


class CorpusInfo(BaseModel):
    """One corpus a request can name."""

    name: str
    digest: str | None = Field(default=None, description="sha256 of the corpus, once loaded")
    documents: int | None = None
    default: bool = Field(default=False, description="used when a request names no corpus")
    source: str = Field(description="where it comes from: a file path or the store")


class CorporaOutput(BaseModel):
    """Every corpus this server can rank, and whether the job tools are available."""

    corpora: list[CorpusInfo]
    pipeline: bool = Field(description="true when submit/get/verify tools have a store")


RunKind = Literal["verification", "rerank"]
RunState = Literal["running", "done", "failed"]


class Alarm(BaseModel):
    """One stored result a verification run raised an alarm for (or a whole-store finding)."""

    key: str
    outcome: str
    where: str | None = None
    detail: str = ""


class VerificationSummary(BaseModel):
    """What a verification run found, in counts, with its alarms (at most 100 listed)."""

    checked: int
    matched: int
    mismatched: int
    drift: int
    missing: int = Field(description="results that could not be replayed")
    alarms: int
    sample_seed: str | None = Field(description="the seed the sample was drawn with, if sampled")
    alarmed: list[Alarm]


class RerankOutcome(RerankCounts):
    """What a re-ranking run found: counts and means over its queries."""


class RunOutput(BaseModel):
    """A verification or re-ranking run: its progress and, once finished, its summary and
    where its full report is (an MCP resource)."""

    run_id: str
    kind: RunKind
    state: RunState
    done: int = Field(description="results replayed or queries re-ranked so far")
    total: int | None = Field(default=None, description="how many the run will process, "
                                                        "once known")
    mode: Mode | None = Field(default=None, description="pipeline: jobs went to the workers; "
                                                        "inline: computed in this server")
    started_at: float | None = Field(default=None, description="Unix time (s)")
    finished_at: float | None = Field(default=None, description="Unix time (s)")
    error: str | None = None
    verification: VerificationSummary | None = None
    rerank: RerankOutcome | None = None
    report: str | None = Field(default=None, description="resource URI of the full report, "
                                                         "once finished")
    page: str | None = Field(default=None, description="path of the run's HTML page (verdict, "
                                                       "pictures, movers, alarms) on the MCP "
                                                       "HTTP server, behind its token")
    asked_by: list[str] = Field(default_factory=list, description=(
        "the tokens (by name) that started it over MCP HTTP; empty where the CLI, stdio or "
        "the nightly verifier did"))


def tool_result(output: BaseModel) -> CallToolResult:
    """``output`` as a tool's result: its structured content, and the same JSON as the text
    a client without structured output reads, compact.

    The SDK's own conversion writes that text indented, from a second dump of the model: a
    ten-hit ``retrieve`` over Cranfield averaged 5,070 bytes of text indented and 3,021
    compact, whitespace a model reading the result pays for in context (ADR 0043). Raises
    orjson.JSONEncodeError for text JSON cannot carry (a lone surrogate).
    """
    data = output.model_dump(mode="json", by_alias=True)
    return CallToolResult(content=[TextContent(type="text", text=orjson.dumps(data).decode())],
                          structured_content=data)
