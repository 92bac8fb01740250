"""The MCP tools: argument schemas, request building, and one call into the backend each.

Argument names follow the reference server (``query``, ``recallBudget``, ``seed``,
``corpus``) so existing clients keep working; that is why they are camelCase here.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Annotated, Any, cast

from mcp.server.mcpserver import Context
from mcp_types import ToolAnnotations
from pydantic import BeforeValidator, Field

from ..config import Settings
from ..core.identity import RESULT_KEY_PATTERN
from ..errors import InvalidRequestError
from ..models import RetrievalRequest
from .errors import off_loop, on_loop, tool_error
from .notify import tell
from .outputs import (
    AuditOutput,
    CorporaOutput,
    JobOutput,
    ResultOutput,
    RetrieveOutput,
    RunInfo,
    VerifyOutput,
)
from .ports import Backend
from .runs import RunBoard
from .tokens import asker


@dataclass(frozen=True)
class State:
    """What the lifespan opens for every call: settings, the backend, the run board."""

    settings: Settings
    backend: Backend
    runs: RunBoard
    # Tool catalogs read by search_tools: each one's tools by document id, by corpus digest.
    catalogs: OrderedDict[str, dict[str, Any]] = field(default_factory=OrderedDict)


def state_of(ctx: Context) -> State:
    """The lifespan's State. Read from the context every tool takes, not injected with the
    SDK's ``Resolve``: its resolution cost ~70 us a call, a field read's work."""
    return cast(State, ctx.request_context.lifespan_context)


def _not_bool(value: Any) -> Any:
    # pydantic would read true as 1; a boolean budget is a caller's mistake, not a number.
    if isinstance(value, bool):
        raise ValueError("must be a whole number, not a boolean")
    return value


Query = Annotated[str, Field(min_length=1, description="the query text")]
# The bound sits on the integer branch, so the schema says "minimum" where a strict validator
# reads it (a bound on the optional as a whole came out as pydantic's raw "ge").
RecallBudget = Annotated[Annotated[int, Field(ge=1)] | None, BeforeValidator(_not_bool), Field(
    description="documents to return in all (default: ROOKHAVEN_DEFAULT_RECALL; at most "
                "ROOKHAVEN_MAX_RECALL)")]
Seed = Annotated[str | None, Field(description="seed for every tie-break "
                                               "(default: ROOKHAVEN_DEFAULT_SEED)")]
# Bounds on references, so an error never echoes a megabyte back: a corpus name is at most
# 128 characters (store.corpora.NAME_MAX) before its @version; a digest is 71.
REF_MAX, ENGINE_REF_MAX = 200, 64
CorpusRef = Annotated[str | None, Field(max_length=REF_MAX, description="corpus name or digest "
                                        "(default: the server's default corpus; see "
                                        "list_corpora)")]
EngineRef = Annotated[str | None, Field(max_length=ENGINE_REF_MAX, description="engine "
                                        "NAME@VERSION, or NAME for its newest version "
                                        "(default: the server's engine)")]
Decompose = Annotated[bool, Field(description="split the query into subqueries (default true)")]
# A malformed key names nothing: refused by the schema (a tool error saying what a key
# looks like), never looked up and reported as a missing result.
Key = Annotated[str, Field(pattern=RESULT_KEY_PATTERN,
                           description="a result key (sha256: and 64 lowercase hex digits)")]
JobId = Annotated[str, Field(pattern=RESULT_KEY_PATTERN,
                             description="a job id (its result key: sha256: and 64 hex digits)")]


def build_request(settings: Settings, query: str, recall_budget: int | None, seed: str | None,
                  decompose: bool) -> RetrievalRequest:
    """The request of a tool's arguments (``Settings.request``); a bad one is a tool error."""
    try:
        return settings.request(query, recall_budget, seed, decompose)
    except InvalidRequestError as exc:
        raise tool_error(exc) from None


def limits(settings: Settings) -> dict[str, tuple[str, str, int]]:
    """The Settings limits the retrieval tools' schemas advertise (property -> type,
    keyword, value); Settings.request enforces the same numbers with its own messages."""
    return {"query": ("string", "maxLength", settings.max_query_len),
            "recallBudget": ("integer", "maximum", settings.max_recall),
            "seed": ("string", "maxLength", settings.max_seed_len)}


async def retrieve(
    ctx: Context, query: Query, recallBudget: RecallBudget = None,
    seed: Seed = None, corpus: CorpusRef = None, decompose: Decompose = True,
    engine: EngineRef = None,
) -> RetrieveOutput:
    """Rank a corpus for a query and return the result: its hits and audit record, with
    ``result_key`` and ``metadata`` beside them.

    Runs through the job pipeline when workers are available, inline otherwise;
    ``metadata.mode`` says which. The same arguments over the same corpus always give
    the same hits and audit, under the same ``result_key``.
    """
    state = state_of(ctx)
    started = time.perf_counter()
    request = build_request(state.settings, query, recallBudget, seed, decompose)
    await ctx.report_progress(0, 1, "ranking")
    if state.backend.answers_at_once(corpus, engine):
        done = on_loop(state.backend.retrieve, request, corpus, engine)
    else:
        done = await off_loop(state.backend.retrieve, request, corpus, engine, asker(ctx))
    await ctx.report_progress(1, 1, f"ranked ({done.mode})")
    if done.mode == "pipeline":
        await tell(ctx.request_context.session, "debug", {
            "event": "job answered", "result_key": done.result_key, "reason": done.reason})
    return RetrieveOutput(
        hits=done.result.hits, audit=done.result.audit, result_key=done.result_key,
        metadata=RunInfo(mode=done.mode, reason=done.reason, corpus=done.corpus,
                         elapsed_ms=round((time.perf_counter() - started) * 1000, 3)))


async def submit_retrieval(
    ctx: Context, query: Query, recallBudget: RecallBudget = None,
    seed: Seed = None, corpus: CorpusRef = None, decompose: Decompose = True,
    engine: EngineRef = None,
) -> JobOutput:
    """Queue a retrieval and return its job id and result key at once.

    Poll ``get_job`` with the job id; fetch the result with ``get_result`` once the job is
    done. A request whose result is already stored is answered as done without queueing.
    """
    state = state_of(ctx)
    request = build_request(state.settings, query, recallBudget, seed, decompose)
    job = await off_loop(state.backend.submit, request, corpus, engine, asker(ctx))
    await tell(ctx.request_context.session, "info", {
        "event": "job submitted", "job_id": job.job_id, "state": job.state})
    return job


async def get_job(ctx: Context,
                  jobId: JobId) -> JobOutput:
    """The state of a job (queued, running, done, failed), its attempts and last error."""
    state = state_of(ctx)
    return await off_loop(state.backend.job, jobId)


async def get_result(ctx: Context, resultKey: Key) -> ResultOutput:
    """A stored result by its result key, shaped like retrieve's (hits and audit), with the
    transparency log's inclusion proof for it against the latest signed checkpoint."""
    state = state_of(ctx)
    result = await off_loop(state.backend.result, resultKey)
    return ResultOutput(hits=result.hits, audit=result.audit, result_key=resultKey,
                        proof=await off_loop(state.backend.proof, resultKey))


async def get_audit(ctx: Context, resultKey: Key) -> AuditOutput:
    """The audit record of a stored result: seed, subqueries, budgets, corpus and engine,
    with the log's inclusion proof."""
    state = state_of(ctx)
    audit = await off_loop(state.backend.audit, resultKey)
    return AuditOutput(result_key=resultKey, audit=audit,
                       proof=await off_loop(state.backend.proof, resultKey))


async def verify_result(ctx: Context, resultKey: Key) -> VerifyOutput:
    """Replay one stored result from its recorded inputs and report match or mismatch."""
    state = state_of(ctx)
    return await off_loop(state.backend.verify, resultKey)


async def list_corpora(ctx: Context) -> CorporaOutput:
    """The corpora this server can rank, which one is the default, and whether the job
    tools (submit, get, verify) have a pipeline behind them."""
    state = state_of(ctx)
    return await off_loop(state.backend.corpora)


RETRIEVAL = (retrieve, submit_retrieval)
TOOLS = (retrieve, submit_retrieval, get_job, get_result, get_audit, verify_result, list_corpora)

# What a client may assume of each tool (MCP tool annotations): none deletes or overwrites
# anything (results are write-once), none reaches beyond this server's store; the retrieval
# tools store what they answer, so they are not read-only, but the same arguments always
# give the same result under the same key.
_READS = ToolAnnotations(readOnlyHint=True, idempotentHint=True, openWorldHint=False)
_STORES = ToolAnnotations(readOnlyHint=False, destructiveHint=False, idempotentHint=True,
                          openWorldHint=False)
ANNOTATIONS = {"retrieve": _STORES, "submit_retrieval": _STORES, "get_job": _READS,
               "get_result": _READS, "get_audit": _READS, "verify_result": _READS,
               "list_corpora": _READS}
