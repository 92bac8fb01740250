"""Job records and their state machine: queued -> running -> done | failed.

Every transition is one Lua script (store.scripts) over many jobs of one shard, so a job's
state, its open-job index and the ledger move together. A job's id is its result key:
submitting the same request twice finds the same job, and a redelivered message finds the
job already done. Per shard, a job is a field of three hashes (spec, state, error), so a
message's jobs move with a few commands, not a few each (docs/adr/0036).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import orjson

from ..core.canonical import canonical_bytes, to_plain
from ..core.identity import open_last
from ..errors import ConfigError, NotFoundError
from .connection import translated
from .context import StoreContext, text
from .heartbeats import Holding
from .keys import ShardKeys
from .records import JobRecord, JobSpec, state_fields, state_name
from .rounds import Item, Reply, Round
from .scripts import MAX_JOBS

_PAGE = 1000
T = TypeVar("T")


@dataclass(frozen=True)
class StaleJob:
    """An open job the sweeper should look at: its id, the 'updated' it saw, and why."""

    id: str
    updated: str
    reason: str


def spec_bytes(spec: JobSpec) -> bytes:
    """The canonical JSON a job's spec is stored as (JobRecord.from_fields reads it)."""
    return (recipe_frame(spec.corpus_digest, spec.provider, spec.params)
            + canonical_bytes(to_plain(spec.request)) + b"}")


def recipe_frame(corpus_digest: str, provider: str, params: dict[str, Any]) -> bytes:
    """``spec_bytes`` of every spec over this corpus and engine, up to its request's own
    canonical bytes (the request is the spec's last key) and the closing brace."""
    return open_last(canonical_bytes({"corpus": corpus_digest, "params": params,
                                      "provider": provider, "request": None}))


class JobStore:
    """Creates jobs and moves them through their states."""

    def __init__(self, ctx: StoreContext) -> None:
        self._ctx = ctx
        self._sweep_from = 0  # the shard the next look for stale jobs begins at

    def _many(self, round_: Round, script: Any, ids: Sequence[str],
              args: Callable[[list[str]], list[Any]], parse: Callable[[Any], T],
              results: bool = False) -> list[Reply[T]]:
        """Queue ``script`` on ``round_`` for ``ids``: one call per shard and per
        MAX_JOBS jobs, each with the shard's job keys (and each job's result key if
        ``results``) and ``args(its ids)`` after the leading ones. A parsed reply per id,
        in order."""
        ctx = self._ctx
        now = ctx.now()
        replies: list[Reply[T] | None] = [None] * len(ids)
        for shard, where in self._pieces(ids):
            k, these = ctx.keys.shards[shard], [ids[at] for at in where]
            keys = ctx.job_keys(k) + ([k.result(i) for i in these] if results else [])
            whole = round_.call(script, keys, [*ctx.job_args(now), *args(these)], list)
            for index, at in enumerate(where):
                replies[at] = Item(whole, index, parse)
        return [reply for reply in replies if reply is not None]

    def create(self, spec: JobSpec) -> str:
        """Record ``spec`` as a queued job unless its result or an open job already exists.

        Returns 'new' (recorded: enqueue it now), 'cached' (the result exists) or the state
        of the job already recorded. A failed job is recorded afresh ('new').
        """
        return self.create_many([spec])[0]

    def create_many(self, specs: Iterable[JobSpec]) -> list[str]:
        """``create`` for each spec, in one round trip."""
        specs = list(specs)
        return self.create_recorded([s.key for s in specs], [spec_bytes(s) for s in specs])

    def create_recorded(self, keys: Sequence[str], recipes: Sequence[bytes]) -> list[str]:
        """``create`` for each job given by its key and its ``spec_bytes``, in one round
        trip: what a submitter that made both sends, with no spec object a job."""
        recorded = dict(zip(keys, recipes, strict=True))
        round_ = Round(self._ctx)
        replies = self._many(round_, self._ctx.create, keys,
                             lambda ids: [len(ids), *ids, *(recorded[i] for i in ids)],
                             text, results=True)
        round_.send(f"recording {len(keys)} jobs")
        return [reply.get() for reply in replies]

    def start(self, job_ids: Sequence[str], worker: str, claim: str = "", *,
              begin: bool = False) -> list[tuple[str, int, JobSpec | None]]:
        """Claim jobs for ``worker``, in one round trip. Per job: ('run', attempts so far,
        spec) to compute it (after ``begin`` with the same ``claim``), ('begun', 1, spec)
        to compute it at once (with ``begin``: a job never begun before is charged its
        first attempt here), or (state, 0, None) to skip it (missing, done, failed).

        A batch claims all its jobs at once, so if the worker dies the sweeper sees every
        one of them as its own, not only the one being computed. ``claim`` names this
        delivery (default: ``worker``): when two copies of a job's message are started,
        only the later claim may begin it."""
        _check_name(worker)
        round_ = Round(self._ctx)
        flag = "1" if begin else "0"
        replies = self._many(round_, self._ctx.start, job_ids,
                             lambda ids: [worker, claim or worker, flag, *ids], list,
                             results=True)
        round_.send(f"starting {len(job_ids)} job(s)")
        return [_started(job_id, reply.get())
                for job_id, reply in zip(job_ids, replies, strict=True)]

    def deliver(self, job_ids: Sequence[str], worker: str, delivery: str = "") -> int:
        """Mark the queued ones of ``job_ids`` as delivered to ``worker`` in the message whose
        token is ``delivery`` (it has arrived, the pool has not started it): if ``worker``
        dies, or drops the message, before ``start``, the sweeper hands them on within a
        heartbeat. How many were queued and marked."""
        _check_name(worker)
        ctx, round_ = self._ctx, Round(self._ctx)
        now = ctx.now()
        claim = f"{worker}/{delivery}" if delivery else ""
        counts = [round_.call(ctx.deliver, ctx.job_keys(ctx.keys.shards[shard]),
                              [*ctx.job_args(now), worker, claim,
                               *(job_ids[at] for at in where)], int)
                  for shard, where in self._pieces(job_ids)]
        round_.send(f"marking {len(job_ids)} job(s) delivered")
        return sum(reply.get() for reply in counts)

    def _pieces(self, job_ids: Sequence[str]) -> Iterator[tuple[int, list[int]]]:
        """The positions in ``job_ids`` by shard, in pieces of at most MAX_JOBS:
        (shard, positions)."""
        by_shard: dict[int, list[int]] = {}
        for at, job_id in enumerate(job_ids):
            by_shard.setdefault(self._ctx.keys.shard_of(job_id), []).append(at)
        for shard, positions in by_shard.items():
            for piece in range(0, len(positions), MAX_JOBS):
                yield shard, positions[piece: piece + MAX_JOBS]

    def _unique_pieces(self, job_ids: Iterable[str]) -> list[tuple[int, list[str]]]:
        """``job_ids`` without repeats, by shard, in pieces of at most MAX_JOBS."""
        unique = list(dict.fromkeys(job_ids))
        return [(shard, [unique[at] for at in where]) for shard, where in self._pieces(unique)]

    def begin(self, job_id: str, worker: str, max_attempts: int,
              claim: str = "") -> tuple[str, int]:
        """Charge ``job_id`` an attempt as ``worker`` starts computing it: ('run', attempt),
        ('failed', 0) when its attempts are spent, or (state, 0) if it is no longer this
        delivery's to run (swept, finished elsewhere, started again under another claim)."""
        round_ = Round(self._ctx)
        reply = self.queue_begin(round_, [job_id], worker, max_attempts, claim)[0]
        round_.send(f"beginning job {job_id}")
        return reply.get()

    def queue_begin(self, round_: Round, job_ids: Sequence[str], worker: str,
                    max_attempts: int, claim: str = "") -> list[Reply[tuple[str, int]]]:
        """``begin`` for each of ``job_ids``, queued on ``round_`` (sent with whatever else
        it carries)."""
        return self._many(round_, self._ctx.begin, job_ids,
                          lambda ids: [worker, max_attempts, claim or worker, *ids], _begun)

    def lost(self, page: int = 1000) -> Iterator[list[str]]:
        """Pages of done jobs whose result is gone, found by a scan of every job's state
        (a done job is in no index, and an index may be lost with the result)."""
        ctx = self._ctx
        ctx.require_jobs()
        with translated(ctx.client, "looking for done jobs without a result"):
            for shard in ctx.keys.shards:
                batch: list[str] = []
                for job_id, state in ctx.client.hscan_iter(shard.job_states, count=page):
                    if state.startswith(b"done|"):
                        batch.append(text(job_id))
                    if len(batch) == page:
                        yield self._without_result(shard, batch)
                        batch = []
                if batch:
                    yield self._without_result(shard, batch)

    def _without_result(self, shard: ShardKeys, job_ids: list[str]) -> list[str]:
        pipe = self._ctx.client.pipeline(transaction=False)
        for job_id in job_ids:
            pipe.exists(shard.result(job_id))
        return [job_id for job_id, found in zip(job_ids, pipe.execute(), strict=True)
                if not found]

    def _one(self, script: Any, job_id: str, args: list[Any], doing: str,
             result: bool = True) -> str:
        """A single-job script's text answer."""
        ctx = self._ctx
        k = ctx.shard(job_id)
        with translated(ctx.client, doing):
            return text(script(keys=[*ctx.job_keys(k), *([k.result(job_id)] if result else [])],
                               args=[*ctx.job_args(ctx.now()), job_id, *args]))

    def reopen(self, job_id: str) -> str:
        """Queue again a done job whose result is gone: 'reopened', or its state."""
        return self._one(self._ctx.reopen, job_id, [], f"reopening job {job_id}")

    def fail(self, job_id: str, error: str, *, permanent: bool, max_attempts: int) -> str:
        """Record ``error``; 'failed' if permanent or out of attempts, else 'queued' to retry."""
        return self._one(self._ctx.fail, job_id, [error, "1" if permanent else "0",
                                                  max_attempts],
                         f"recording the failure of job {job_id}", result=False)

    def requeue(self, stale: StaleJob, max_attempts: int) -> str:
        """Reopen a stale job: 'requeue' (enqueue it), 'done', 'failed', or 'changed'."""
        return self._one(self._ctx.requeue, stale.id, [stale.updated, max_attempts,
                                                       stale.reason],
                         f"sweeping job {stale.id}")

    def get(self, job_id: str) -> JobRecord:
        """The job record, or NotFoundError."""
        record = self.get_many([job_id])[0]
        if record is None:
            raise NotFoundError(f"no job {job_id!r}; job ids are the result keys that "
                                "`rookhaven submit` prints")
        return record

    def get_many(self, job_ids: Iterable[str]) -> list[JobRecord | None]:
        """Records in the order asked for; None where there is none."""
        ctx = self._ctx
        ctx.require_jobs()
        job_ids = list(job_ids)
        found: dict[str, JobRecord | None] = {}
        with translated(ctx.client, "reading job records"):
            pipe = ctx.client.pipeline(transaction=False)
            pieces = self._unique_pieces(job_ids)
            for shard, ids in pieces:
                k = ctx.keys.shards[shard]
                pipe.hmget(k.job_specs, ids).hmget(k.job_states, ids).hmget(k.job_errors, ids)
                pipe.hmget(k.job_askers, ids)
            answers = pipe.execute()
        for at, (_, ids) in enumerate(pieces):
            specs, states, errors, askers = answers[4 * at: 4 * at + 4]
            for job_id, spec, state, error, asked in zip(ids, specs, states, errors, askers,
                                                         strict=True):
                found[job_id] = (JobRecord.from_fields(job_id, spec, state, error, asked)
                                 if spec is not None and state is not None else None)
        return [found[job_id] for job_id in job_ids]

    def states_many(self, job_ids: Sequence[str]) -> list[str | None]:
        """Each job's state name ('queued', 'running', 'done', 'failed'), None where there is
        no job: one HMGET per shard and page, none of the specs read (for polling)."""
        ctx = self._ctx
        ctx.require_jobs()
        found: dict[str, str | None] = {}
        with translated(ctx.client, "reading job states"):
            pipe = ctx.client.pipeline(transaction=False)
            pieces = self._unique_pieces(job_ids)
            for shard, ids in pieces:
                pipe.hmget(ctx.keys.shards[shard].job_states, ids)
            for (_, ids), states in zip(pieces, pipe.execute(), strict=True):
                for job_id, state in zip(ids, states, strict=True):
                    found[job_id] = None if state is None else state_name(state)
        return [found[job_id] for job_id in job_ids]

    def counts(self) -> dict[str, int]:
        """How many jobs are queued and running right now."""
        ctx = self._ctx
        with translated(ctx.client, "counting open jobs"):
            pipe = ctx.client.pipeline(transaction=False)
            for shard in ctx.keys.shards:
                pipe.zcard(shard.jobs_queued).zcard(shard.jobs_running)
            found = pipe.execute()
        return {"queued": sum(found[0::2]), "running": sum(found[1::2])}

    def stale(self, *, queued_before: float, running_before: float,
              holding: Callable[[set[str]], Mapping[str, Holding]], limit: int,
              undelivered_before: float | None = None) -> list[StaleJob]:
        """Open jobs to sweep: queued since before ``queued_before``, or since before
        ``undelivered_before`` and received by no worker; delivered to, or running on, a
        worker that is not alive (not in ``holding``'s answer) or that dropped its message
        (``Holding.dropped``); running since before ``running_before``. At most ``limit``,
        each once."""
        self._ctx.require_jobs()
        found: dict[str, StaleJob] = {}
        shards = self._ctx.keys.shards
        # A sweep that fills its limit stops; the next one begins at the shard after, so
        # no shard waits behind the others' backlog.
        for turn in range(len(shards)):
            shard = shards[(self._sweep_from + turn) % len(shards)]
            self._stale_in(shard, found, queued_before=queued_before,
                           running_before=running_before, holding=holding, limit=limit,
                           undelivered_before=undelivered_before)
            if len(found) >= limit:
                self._sweep_from = (shard.index + 1) % len(shards)
                break
        return list(found.values())[:limit]

    def open_in(self, shard: ShardKeys, reason: str) -> list[StaleJob]:
        """Every open job of ``shard`` (queued, delivered or running), to sweep for
        ``reason``."""
        ctx = self._ctx
        with translated(ctx.client, "listing open jobs"):
            ids = list(dict.fromkeys(
                text(i) for index in (shard.jobs_queued, shard.jobs_delivered,
                                      shard.jobs_running)
                for i in ctx.client.zrange(index, 0, -1)))
            return [StaleJob(i, updated, reason) for i, updated
                    in zip(ids, self._fields(shard, ids, "updated"), strict=True)
                    if updated is not None]

    def _stale_in(self, shard: ShardKeys, found: dict[str, StaleJob], *, queued_before: float,
                  running_before: float, holding: Callable[[set[str]], Mapping[str, Holding]],
                  limit: int,
                  undelivered_before: float | None) -> None:
        """``stale`` in one shard, added to ``found``."""
        ctx = self._ctx
        with translated(ctx.client, "looking for stale jobs"):
            # Delivered first: a job delivered between the reads may be sent again (the
            # duplicate finds it claimed or done); one that moves on is missed one sweep at
            # most, never lost.
            delivered = self._held(shard, shard.jobs_delivered, "state", "worker", "updated",
                                   "claim")
            received = {i for i, _ in delivered}
            # Oldest first: those past queued_before, then (if asked) younger unreceived ones.
            waiting = [(text(i), score) for i, score in ctx.client.zrangebyscore(
                shard.jobs_queued, "-inf", max(queued_before, undelivered_before or 0),
                start=0, num=limit, withscores=True)
                if score <= queued_before or text(i) not in received]
            ids = [i for i, _ in waiting]
            for (i, score), updated in zip(waiting, self._fields(shard, ids, "updated"),
                                           strict=True):
                if updated is not None:
                    found[i] = StaleJob(i, updated, "queued without a result"
                                        if score <= queued_before
                                        else "queued, with no message waiting")
            running = self._held(shard, shard.jobs_running, "worker", "updated", "started",
                                 "claim")
            # Read after the jobs: a message a worker took since is in no job read here.
            living = holding({f[1] for _, f in delivered} | {f[0] for _, f in running})
            for i, (state, worker, updated, claim) in delivered:
                if state != "queued":
                    continue
                if worker not in living:
                    found.setdefault(i, StaleJob(
                        i, updated, f"delivered to worker {worker}, which stopped"))
                elif living[worker].dropped(claim, updated):
                    found.setdefault(i, StaleJob(
                        i, updated, f"delivered to worker {worker}, which dropped its message"))
            for i, (worker, updated, started, claim) in running:
                if worker not in living:
                    found.setdefault(i, StaleJob(i, updated, f"worker {worker} stopped"))
                elif living[worker].dropped(claim, started):
                    found.setdefault(i, StaleJob(
                        i, updated, f"worker {worker} dropped its message (a task ended "
                        "without finishing it: terminated at a connection loss, killed, "
                        "revoked)"))
                elif float(started) < running_before:
                    found.setdefault(i, StaleJob(i, updated, "ran past the task time limit"))

    def _held(self, shard: ShardKeys, index: str,
              *names: str) -> list[tuple[str, tuple[str, ...]]]:
        """Each job in the sorted set ``index`` with its state's fields ``names``, where it
        has a state."""
        ids = [text(i) for i in self._ctx.client.zrange(index, 0, -1)]
        return [(i, fields) for i, fields in zip(ids, self._fields(shard, ids, *names),
                                                 strict=True)
                if fields is not None]

    def _fields(self, shard: ShardKeys, job_ids: list[str], *names: str) -> list[Any]:
        """The state fields ``names`` of each job, paged; a field tuple (or one value), or
        None for a job with no state."""
        out: list[Any] = []
        for at in range(0, len(job_ids), _PAGE):
            states = self._ctx.client.hmget(shard.job_states, job_ids[at: at + _PAGE])
            for state in states:
                if state is None:
                    out.append(None)
                    continue
                values = state_fields(state)
                picked = tuple(values[name] for name in names)
                out.append(picked[0] if len(picked) == 1 else picked)
        return out


def _check_name(worker: str) -> None:
    if "|" in worker:  # the state string's separator (store.scripts)
        raise ConfigError(f"a worker's name cannot hold '|' ({worker!r}); name it without")


def _started(job_id: str, reply: list[Any]) -> tuple[str, int, JobSpec | None]:
    verdict = text(reply[0])
    if verdict not in ("run", "begun") or len(reply) < 3 or reply[2] is None:
        return (verdict if verdict not in ("run", "begun") else "missing"), 0, None
    return verdict, int(reply[1]), decode_spec(job_id, reply[2])


def decode_spec(job_id: str, stored: bytes) -> JobSpec:
    """The spec stored for ``job_id`` (``spec_bytes``), decoded and validated in one call."""
    recipe = orjson.loads(stored)
    if not isinstance(recipe, dict):
        recipe = {}
    return JobSpec.model_validate({"key": job_id, "request": recipe.get("request"),
                                   "corpus_digest": recipe.get("corpus"),
                                   "provider": recipe.get("provider"),
                                   "params": recipe.get("params")})


def _begun(reply: list[Any]) -> tuple[str, int]:
    verdict = text(reply[0])
    return verdict, int(text(reply[1])) if verdict == "run" else 0
