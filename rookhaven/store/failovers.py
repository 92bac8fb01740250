"""Failovers: which shards changed primary since the sweeper last looked.

A primary acknowledges a write before its replicas hold it, so a failover can lose the last
writes of jobs in its slots: a job already done or running may be back to queued, with no
message left to run it. Each shard keeps the replication id of the primary that served it
at the last sweep (Redis gives a promoted replica, and a restarted server, a new one); when
it differs now, the sweeper enqueues the shard's open jobs again (a duplicate finds its job
claimed or done and does nothing). One sweep at a time hands a shard back: it claims the
hand-back for a sweep interval, and lets go when it records the new primary, or when it
fails before the jobs went out (a crashed sweep's claim expires, and the next sweep does
it). See
docs/adr/0045-failover-sweep.md and 0058. The first record is made as soon as anything
records or runs a job (``baseline``), not only by a sweep, so a failover in a store's first
seconds is seen too.
"""

from __future__ import annotations

from . import cluster
from .connection import translated
from .context import StoreContext
from .keys import ShardKeys
from .replication import replication_id
from .rounds import Round


class Failovers:
    """Shards whose primary's replication history changed since it was last recorded."""

    def __init__(self, ctx: StoreContext) -> None:
        self._ctx = ctx
        self._based = False  # whether ``baseline`` has recorded this store's primaries

    def baseline(self) -> None:
        """Record the primary serving each shard where none is recorded yet, once in this
        process: a submitter or worker calls it before its first job, so a failover before
        the first sweep differs from the record. Not the sweep's record, which moves on to
        each new primary: where one is kept, it stays."""
        if self._based:
            return
        ctx = self._ctx
        shards = ctx.keys.shards
        with translated(ctx.client, "recording the primaries' replication ids"):
            now = self._current(shards)
            pipe = ctx.client.pipeline(transaction=False)
            for shard, replid in zip(shards, now, strict=True):
                if replid is not None:
                    pipe.set(shard.primary_seen, replid, nx=True)
            pipe.execute()
        self._based = True

    def changed(self, token: str, hold_for: float) -> tuple[list[ShardKeys], dict[str, bytes]]:
        """The shards whose primary changed since ``settle`` last recorded it and whose
        hand-back this sweep (``token``) now claims for ``hold_for`` seconds, and the record
        to settle once their jobs are looked after. A shard another sweep is handing back,
        one seen for the first time, or one on a server that does not say its replication
        id, is not reported. Sweeps overlap when the store comes back from a failover with
        several waiting on it: without the claim, each would send every open job again."""
        ctx = self._ctx
        shards = ctx.keys.shards
        with translated(ctx.client, "reading the primaries' replication ids"):
            now = self._current(shards)
            pipe = ctx.client.pipeline(transaction=False)
            for shard in shards:
                pipe.get(shard.primary_seen)
            before = pipe.execute()
        differ = [(shard, current) for shard, seen, current in zip(shards, before, now, strict=True)
                  if seen is not None and current is not None and seen != current]
        round_ = Round(ctx)
        claims = [round_.call(ctx.claim, [shard.primary_seen, shard.primary_claim],
                              [current, token, max(1, round(hold_for * 1000))], int)
                  for shard, current in differ]
        round_.send("claiming the hand-back of a failed-over shard's jobs")
        changed = [shard for (shard, _), claim in zip(differ, claims, strict=True) if claim.get()]
        claimed = {shard.primary_seen for shard in changed}
        record = {shard.primary_seen: current
                  for shard, seen, current in zip(shards, before, now, strict=True)
                  if current is not None and (seen is None or shard.primary_seen in claimed)
                  and seen != current}
        return changed, record

    def settle(self, record: dict[str, bytes], token: str) -> None:
        """Record the primaries ``changed`` found, once their shards' jobs are enqueued, and
        let go of ``token``'s claims."""
        if not record:
            return
        ctx = self._ctx
        round_ = Round(ctx)
        for shard in ctx.keys.shards:
            if shard.primary_seen in record:
                round_.call(ctx.settle, [shard.primary_seen, shard.primary_claim],
                            [record[shard.primary_seen], token], int)
        round_.send("recording the primaries' replication ids")

    def release(self, shards: list[ShardKeys], token: str) -> None:
        """Let go of ``token``'s claims on ``shards`` without recording their primaries: a
        sweep that failed before their jobs went out leaves them to the next one."""
        ctx = self._ctx
        round_ = Round(ctx)
        for shard in shards:
            round_.call(ctx.release, [shard.primary_claim], [token], int)
        round_.send("letting go of a failed-over shard's hand-back")

    def _current(self, shards: tuple[ShardKeys, ...]) -> list[bytes | None]:
        """``_replids``, relearning a cluster's map if a node is gone from it."""
        client = self._ctx.client
        if cluster.is_cluster(client):
            return list(client.patience.call_with_retry(lambda: self._replids(shards),
                                                        lambda _error: client.relearn()))
        return self._replids(shards)

    def _replids(self, shards: tuple[ShardKeys, ...]) -> list[bytes | None]:
        """The replication id of the primary serving each shard now."""
        client = self._ctx.client
        if not cluster.is_cluster(client):
            return [replication_id(client)] * len(shards)
        by_node: dict[str, bytes | None] = {}
        found = []
        for shard in shards:
            node = client.get_node_from_key(shard.primary_seen)
            if node.name not in by_node:
                by_node[node.name] = replication_id(client.get_redis_connection(node))
            found.append(by_node[node.name])
        return found

