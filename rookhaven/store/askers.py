"""Who asked: the MCP tokens that submitted each job, and each token's jobs still open.

A job's askers are a field of its shard's askers hash (store.keys), written before the job
is recorded, so a job is never recorded without the token that asked for it; the result's
bytes and key do not depend on them (two clients asking the same thing share one job, which
names both). A token's open jobs are a sorted set its submissions add to; jobs that closed
are forgotten only when the count reaches the limit, so counting costs one ZCARD a
submission until then.
"""

from __future__ import annotations

from collections.abc import Sequence

from .connection import translated
from .context import StoreContext
from .jobs import JobStore
from .rounds import Round

OPEN = ("queued", "running")


class Askers:
    """Job askers and each token's open jobs."""

    def __init__(self, ctx: StoreContext, jobs: JobStore) -> None:
        self._ctx, self._jobs = ctx, jobs

    def note(self, job_ids: Sequence[str], name: str) -> None:
        """Record token ``name`` as an asker of each of ``job_ids``, and count them among
        its open jobs."""
        if not job_ids:
            return
        ctx = self._ctx
        unique = list(dict.fromkeys(job_ids))
        round_ = Round(ctx)
        for job_id in unique:
            round_.call(ctx.name, [ctx.keys.shard(job_id).job_askers], [job_id, name], int)
        open_key, now = ctx.keys.token_jobs(name), ctx.now()
        round_.command("ZADD", [open_key],
                       [open_key, "NX", *(part for job_id in unique for part in (now, job_id))],
                       int)
        round_.send(f"noting token {name!r} as the asker of {len(unique)} job(s)")

    def open_jobs(self, name: str, at_least: int) -> int:
        """How many jobs token ``name`` submitted are queued or running: exact (the closed
        ones forgotten) once the count of those not yet forgotten reaches ``at_least``."""
        client, key = self._ctx.client, self._ctx.keys.token_jobs(name)
        with translated(client, f"counting the open jobs of token {name!r}"):
            counted = int(client.zcard(key))
            if counted < at_least:
                return counted
            ids = [bytes(i).decode() for i in client.zrange(key, 0, -1)]
        states = self._jobs.states_many(ids)
        closed = [i for i, state in zip(ids, states, strict=True) if state not in OPEN]
        if closed:
            with translated(client, f"forgetting the closed jobs of token {name!r}"):
                client.zrem(key, *closed)
        return len(ids) - len(closed)
