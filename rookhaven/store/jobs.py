"""Job records and their state machine: queued -> running -> done | failed.

Every transition is one Lua script (store.scripts), so a job's state, its open-job index
and the ledger move together. A job's id is its result key: submitting the same request
twice finds the same job, and a redelivered message finds the job already done.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from ..core.canonical import canonical_bytes
from ..errors import NotFoundError
from ..models import RetrievalRequest
from .connection import translated
from .context import StoreContext, text
from .keys import ShardKeys
from .records import JobRecord, JobSpec
from .rounds import Reply, Round

_PAGE = 1000


@dataclass(frozen=True)
class StaleJob:
    """An open job the sweeper should look at: its id, the 'updated' it saw, and why."""

    id: str
    updated: str
    reason: str


class JobStore:
    """Creates jobs and moves them through their states."""

    def __init__(self, ctx: StoreContext) -> None:
        self._ctx = ctx
        self._sweep_from = 0  # the shard the next look for stale jobs begins at

    def create(self, spec: JobSpec) -> str:
        """Record ``spec`` as a queued job unless its result or an open job already exists.

        Returns 'new' (recorded: enqueue it now), 'cached' (the result exists) or the state
        of the job already recorded. A failed job is recorded afresh ('new').
        """
        ctx = self._ctx
        with translated(ctx.client, f"recording job {spec.key}"):
            reply = ctx.create(keys=ctx.job_keys(spec.key), args=[
                *ctx.job_args(ctx.now(), spec.key),
                canonical_bytes(spec.request), spec.corpus_digest, spec.provider,
                canonical_bytes(spec.params), spec.key,
            ])
        return text(reply)

    def create_many(self, specs: Iterable[JobSpec]) -> list[str]:
        """``create`` for each spec, in one round trip."""
        ctx = self._ctx
        specs = list(specs)
        now = ctx.now()
        round_ = Round(ctx)
        replies = [round_.call(ctx.create, ctx.job_keys(spec.key), [
            *ctx.job_args(now, spec.key),
            canonical_bytes(spec.request), spec.corpus_digest, spec.provider,
            canonical_bytes(spec.params), spec.key,
        ], text) for spec in specs]
        round_.send(f"recording {len(specs)} jobs")
        return [reply.get() for reply in replies]

    def start(self, job_ids: Sequence[str], worker: str,
              claim: str = "") -> list[tuple[str, int, JobSpec | None]]:
        """Claim jobs for ``worker``, pipelined. Per job: ('run', attempts so far, spec) to
        compute it (after ``begin`` with the same ``claim``), or (state, 0, None) to skip it
        (missing, done, failed).

        A batch claims all its jobs at once, so if the worker dies the sweeper sees every
        one of them as its own, not only the one being computed; only ``begin`` charges
        an attempt. ``claim`` names this delivery (default: ``worker``): when two copies of
        a job's message are started, only the later claim may begin it."""
        ctx = self._ctx
        now = ctx.now()
        round_ = Round(ctx)
        replies = [round_.call(ctx.start, ctx.job_keys(job_id),
                               [*ctx.job_args(now, job_id), worker, claim or worker],
                               functools.partial(self._started, job_id))
                   for job_id in job_ids]
        round_.send(f"starting {len(job_ids)} job(s)")
        return [reply.get() for reply in replies]

    def deliver(self, job_ids: Sequence[str], worker: str) -> int:
        """Mark the queued ones of ``job_ids`` as delivered to ``worker`` (its message has
        arrived, its pool has not started it): if ``worker`` dies before ``start``, the
        sweeper hands them on within a heartbeat. How many were queued and marked."""
        ctx = self._ctx
        by_shard: dict[int, list[str]] = {}
        for job_id in job_ids:
            by_shard.setdefault(ctx.keys.shard_of(job_id), []).append(job_id)
        now, round_ = ctx.now(), Round(ctx)
        replies = [round_.call(ctx.deliver, [ctx.keys.shards[shard].jobs_delivered,
                                             *(ctx.keys.job(j) for j in ids)],
                               [now, worker, *ids], int)
                   for shard, ids in by_shard.items()]
        round_.send(f"marking {len(job_ids)} job(s) delivered")
        return sum(reply.get() for reply in replies)

    @staticmethod
    def _started(job_id: str, reply: list[Any]) -> tuple[str, int, JobSpec | None]:
        verdict = text(reply[0])
        if verdict != "run":
            return verdict, 0, None
        request, corpus, provider, params = (text(v) for v in reply[2:6])
        spec = JobSpec(key=job_id, request=RetrievalRequest.model_validate_json(request),
                       corpus_digest=corpus, provider=provider, params=orjson.loads(params))
        return verdict, int(text(reply[1])), spec

    def begin(self, job_id: str, worker: str, max_attempts: int,
              claim: str = "") -> tuple[str, int]:
        """Charge ``job_id`` an attempt as ``worker`` starts computing it: ('run', attempt),
        ('failed', 0) when its attempts are spent, or (state, 0) if it is no longer this
        delivery's to run (swept, finished elsewhere, started again under another claim)."""
        round_ = Round(self._ctx)
        reply = self.queue_begin(round_, job_id, worker, max_attempts, claim)
        round_.send(f"beginning job {job_id}")
        return reply.get()

    def queue_begin(self, round_: Round, job_id: str, worker: str, max_attempts: int,
                    claim: str = "") -> Reply[tuple[str, int]]:
        """``begin``, queued on ``round_`` (sent with whatever else it carries)."""
        ctx = self._ctx
        return round_.call(ctx.begin, ctx.job_keys(job_id), [
            *ctx.job_args(ctx.now(), job_id), worker, max_attempts, claim or worker,
        ], _begun)

    def lost(self, page: int = 1000) -> Iterator[list[str]]:
        """Pages of done jobs whose result is gone, found by a scan of every job record
        (a done job is in no index, and an index may be lost with the result)."""
        ctx = self._ctx
        with translated(ctx.client, "looking for done jobs without a result"):
            batch: list[str] = []
            for name in ctx.client.scan_iter(match=ctx.keys.pattern("job"), count=page):
                batch.append(text(name).split(":job:", 1)[1])
                if len(batch) == page:
                    yield self._without_result(batch)
                    batch = []
            if batch:
                yield self._without_result(batch)

    def _without_result(self, job_ids: list[str]) -> list[str]:
        ctx = self._ctx
        pipe = ctx.client.pipeline(transaction=False)
        for job_id in job_ids:
            pipe.hget(ctx.keys.job(job_id), "state")
            pipe.exists(ctx.keys.result(job_id))
        flags = pipe.execute()
        return [job_id for i, job_id in enumerate(job_ids)
                if flags[2 * i] == b"done" and not flags[2 * i + 1]]

    def reopen(self, job_id: str) -> str:
        """Queue again a done job whose result is gone: 'reopened', or its state."""
        ctx = self._ctx
        with translated(ctx.client, f"reopening job {job_id}"):
            return text(ctx.reopen(keys=ctx.job_keys(job_id),
                                   args=ctx.job_args(ctx.now(), job_id)))

    def fail(self, job_id: str, error: str, *, permanent: bool, max_attempts: int) -> str:
        """Record ``error``; 'failed' if permanent or out of attempts, else 'queued' to retry."""
        ctx = self._ctx
        with translated(ctx.client, f"recording the failure of job {job_id}"):
            reply = ctx.fail(keys=ctx.job_keys(job_id), args=[
                *ctx.job_args(ctx.now(), job_id), error, "1" if permanent else "0",
                max_attempts,
            ])
        return text(reply)

    def requeue(self, stale: StaleJob, max_attempts: int) -> str:
        """Reopen a stale job: 'requeue' (enqueue it), 'done', 'failed', or 'changed'."""
        ctx = self._ctx
        with translated(ctx.client, f"sweeping job {stale.id}"):
            reply = ctx.requeue(keys=ctx.job_keys(stale.id), args=[
                *ctx.job_args(ctx.now(), stale.id), stale.updated, max_attempts, stale.reason,
            ])
        return text(reply)

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
        with translated(ctx.client, "reading job records"):
            pipe = ctx.client.pipeline(transaction=False)
            for job_id in job_ids:
                pipe.hgetall(ctx.keys.job(job_id))
            return [JobRecord.from_hash(raw) if raw else None for raw in pipe.execute()]

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
              alive: Callable[[set[str]], set[str]], limit: int,
              undelivered_before: float | None = None) -> list[StaleJob]:
        """Open jobs to sweep: queued since before ``queued_before``, or since before
        ``undelivered_before`` and received by no worker; delivered to, or running on, a
        worker that is not ``alive``; running since before ``running_before``. At most
        ``limit``, each once."""
        found: dict[str, StaleJob] = {}
        shards = self._ctx.keys.shards
        # A sweep that fills its limit stops; the next one begins at the shard after, so
        # no shard waits behind the others' backlog.
        for turn in range(len(shards)):
            shard = shards[(self._sweep_from + turn) % len(shards)]
            self._stale_in(shard, found, queued_before=queued_before,
                           running_before=running_before, alive=alive, limit=limit,
                           undelivered_before=undelivered_before)
            if len(found) >= limit:
                self._sweep_from = (shard.index + 1) % len(shards)
                break
        return list(found.values())[:limit]

    def _stale_in(self, shard: ShardKeys, found: dict[str, StaleJob], *, queued_before: float,
                  running_before: float, alive: Callable[[set[str]], set[str]], limit: int,
                  undelivered_before: float | None) -> None:
        """``stale`` in one shard, added to ``found``."""
        ctx = self._ctx
        with translated(ctx.client, "looking for stale jobs"):
            # Delivered first: a job delivered between the reads may be sent again (the
            # duplicate finds it claimed or done); one that moves on is missed one sweep at
            # most, never lost.
            delivered = self._held(shard.jobs_delivered, "state", "worker", "updated")
            received = {i for i, _ in delivered}
            # Oldest first: those past queued_before, then (if asked) younger unreceived ones.
            waiting = [(text(i), score) for i, score in ctx.client.zrangebyscore(
                shard.jobs_queued, "-inf", max(queued_before, undelivered_before or 0),
                start=0, num=limit, withscores=True)
                if score <= queued_before or text(i) not in received]
            ids = [i for i, _ in waiting]
            for (i, score), updated in zip(waiting, self._fields(ids, "updated"), strict=True):
                if updated is not None:
                    found[i] = StaleJob(i, updated, "queued without a result"
                                        if score <= queued_before
                                        else "queued, with no message waiting")
            running = self._held(shard.jobs_running, "worker", "updated", "started")
            living = alive({f[1] for _, f in delivered} | {f[0] for _, f in running})
            for i, (state, worker, updated) in delivered:
                if state == "queued" and worker not in living:
                    found.setdefault(i, StaleJob(
                        i, updated, f"delivered to worker {worker}, which stopped"))
            for i, (worker, updated, started) in running:
                if worker not in living:
                    found.setdefault(i, StaleJob(i, updated, f"worker {worker} stopped"))
                elif float(started) < running_before:
                    found.setdefault(i, StaleJob(i, updated, "ran past the task time limit"))

    def _held(self, index: str, *names: str) -> list[tuple[str, tuple[str, ...]]]:
        """Each job in the sorted set ``index`` with its fields ``names``, where it has all."""
        ids = [text(i) for i in self._ctx.client.zrange(index, 0, -1)]
        return [(i, fields) for i, fields in zip(ids, self._fields(ids, *names), strict=True)
                if fields is not None]

    def _fields(self, job_ids: list[str], *names: str) -> list[Any]:
        """HMGET ``names`` of each job, paged; a field tuple (or one value) or None."""
        ctx = self._ctx
        out: list[Any] = []
        for at in range(0, len(job_ids), _PAGE):
            pipe = ctx.client.pipeline(transaction=False)
            for job_id in job_ids[at: at + _PAGE]:
                pipe.hmget(ctx.keys.job(job_id), list(names))
            for values in pipe.execute():
                if any(v is None for v in values):
                    out.append(None)
                else:
                    decoded = tuple(text(v) for v in values)
                    out.append(decoded[0] if len(decoded) == 1 else decoded)
        return out


def _begun(reply: list[Any]) -> tuple[str, int]:
    verdict = text(reply[0])
    return verdict, int(text(reply[1])) if verdict == "run" else 0
