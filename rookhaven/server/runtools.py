"""The auditors' tools: start a verification or a re-ranking run (the id comes back at once)
and follow it with ``get_run``, which can wait for it and reports progress while it does."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

import anyio
from mcp.server.mcpserver import Context
from mcp_types import ToolAnnotations
from pydantic import Field

from ..config import MAX_VERIFY_SAMPLE
from ..errors import InputError
from ..verification import Selection
from .errors import off_loop, tool_error
from .outputs import RunOutput
from .ports import RerankTarget
from .tokens import asker
from .tools import ENGINE_REF_MAX, REF_MAX, Key, State, state_of

POLL = 0.2  # how often a waiting get_run looks at its run again (s)
MAX_WAIT = 300

RunId = Annotated[str, Field(pattern=r"^(verify|rerank)-[0-9A-Za-z.]{1,64}$",
                             description="a run id from start_verification or start_rerank")]
Sample = Annotated[Annotated[int, Field(ge=1, le=MAX_VERIFY_SAMPLE)] | None, Field(
    description="replay a seeded sample of this many results (default: "
                "ROOKHAVEN_VERIFY_SAMPLE; for every result, all)")]
Stratify = Annotated[Literal["none", "corpus", "age"] | None, Field(
    description="spread the sample by corpus or month stored (default: "
                "ROOKHAVEN_VERIFY_STRATIFY)")]
OverCorpus = Annotated[str | None, Field(max_length=REF_MAX, description="only results over "
                                         "this corpus (name, name@version, latest or digest)")]
Moment = Annotated[datetime | None, Field(description="ISO 8601 date-time")]


async def start_verification(
    ctx: Context, all: bool = False,
    sample: Sample = None, seed: Annotated[str | None, Field(
        description="seed the sample is drawn with (default: one made from the time; "
                    "recorded either way)")] = None,
    corpus: OverCorpus = None, keys: Annotated[list[Key] | None, Field(
        description="replay exactly these result keys")] = None,
    stratify: Stratify = None,
) -> RunOutput:
    """Start a verification run and return its run id at once.

    The run replays stored results from their audits and compares bytes, as the nightly
    verifier does: every result (`all`), the given `keys`, or a seeded `sample` (the
    default), optionally only over one `corpus`. Follow it with get_run; alarms are
    listed in its summary and the full record is a resource.
    """
    state = state_of(ctx)
    if sum((all, bool(keys), sample is not None)) > 1:
        raise tool_error(InputError("give one of all, keys or sample"))
    settings = state.settings
    try:
        settings.check_sample_seed(seed)
    except InputError as exc:
        raise tool_error(exc) from exc
    selection = Selection(
        keys=keys or [], all=all,
        sample=None if (all or keys) else (sample or settings.verify_sample),
        seed=seed, corpus=corpus, stratify=stratify or settings.verify_stratify)
    prepared = await off_loop(state.backend.start_verification, selection, asker(ctx))
    return state.runs.start(prepared, ctx.request_context.session)


async def start_rerank(
    ctx: Context, corpus: OverCorpus = None,
    since: Moment = None, until: Moment = None,
    limit: Annotated[Annotated[int, Field(ge=1)] | None,
                     Field(description="at most this many queries")] = None,
    toCorpus: Annotated[str | None, Field(max_length=REF_MAX, description="target corpus "
                                          "(default: each query's own)")] = None,
    toEngine: Annotated[str | None, Field(max_length=ENGINE_REF_MAX, description="target "
                                          "engine NAME@VERSION (default: each query's own)")
                        ] = None,
    params: Annotated[dict[str, Any] | None, Field(
        description="target engine parameters, e.g. {\"k1\": 1.5}")] = None,
) -> RunOutput:
    """Start re-ranking historical queries against another corpus and/or engine, and
    return the run id at once.

    The queries are those of stored results over `corpus`, stored between `since` and
    `until` (default: now). Give `toCorpus`, `toEngine` or both. Jobs go to the workers
    when one is alive and are computed in this server otherwise; the same run started
    again resumes where it stopped. Follow it with get_run.
    """
    state = state_of(ctx)
    target = RerankTarget(corpus=corpus, since=since, until=until, limit=limit,
                          to_corpus=toCorpus, to_engine=toEngine, params=params)
    prepared = await off_loop(state.backend.start_rerank, target, asker(ctx))
    return state.runs.start(prepared, ctx.request_context.session)


async def _current(state: State, run_id: str) -> RunOutput:
    here = state.runs.get(run_id)
    return here if here is not None else await off_loop(state.backend.recorded_run, run_id)


async def get_run(
    ctx: Context, runId: RunId,
    wait: Annotated[float, Field(ge=0, le=MAX_WAIT, description="seconds to wait for the run "
                                 "to finish before answering (default 0: answer now)")] = 0,
) -> RunOutput:
    """A run's state and progress; once it is done, its summary and the resource URI of its
    full report.

    With `wait`, answers when the run finishes or the wait is over, sending progress
    notifications meanwhile when the call carries a progress token.
    """
    state = state_of(ctx)
    deadline = anyio.current_time() + wait
    run = await _current(state, runId)
    reported = -1
    while run.state == "running" and anyio.current_time() < deadline:
        if run.done != reported:
            reported = run.done
            await ctx.report_progress(run.done, run.total, f"{run.kind} {run.done}/"
                                      f"{run.total if run.total is not None else '?'}")
        await anyio.sleep(POLL)
        run = await _current(state, runId)
    if wait and run.total is not None:
        await ctx.report_progress(run.done, run.total, f"{run.kind} {run.state}")
    return run


RUN_TOOLS = (start_verification, start_rerank, get_run)

# As tools.ANNOTATIONS: a verification records a new run each time; a re-ranking started
# again with the same arguments resumes the same run.
RUN_ANNOTATIONS = {
    "start_verification": ToolAnnotations(readOnlyHint=False, destructiveHint=False,
                                          idempotentHint=False, openWorldHint=False),
    "start_rerank": ToolAnnotations(readOnlyHint=False, destructiveHint=False,
                                    idempotentHint=True, openWorldHint=False),
    "get_run": ToolAnnotations(readOnlyHint=True, idempotentHint=True, openWorldHint=False)}
