"""What the store holds and what it costs: keys per kind, and bytes per result and per leaf.

Counts come from the store's own indexes (no scan of the keyspace). Bytes come from Redis's
``MEMORY USAGE`` over a sample of results (each framing its audit, with the job hashes' and the
index entries' share a result) and over the log's structures divided by its leaves, so that the
memory a number of results will need can be projected (``bytes_for``).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from redis.exceptions import ResponseError

from . import cluster
from .connection import translated
from .context import StoreContext, text
from .keys import LOG_CHUNK

# Bytes of one sorted-set member with its score (a 71-byte result key): MEMORY USAGE of a
# set of 10^5 of them over 10^5, on Redis 7.0.15. The two audit indexes hold every result;
# measuring them whole for each call would cost a walk of sets of any size.
_INDEX_ENTRY = 2 * 168
# Fields MEMORY USAGE samples of each job hash (which may hold millions).
_HASH_SAMPLES = 1000


@dataclass(frozen=True)
class StoreUsage:
    """Counts per kind, and the measured bytes per stored result and per log leaf."""

    redis_version: str
    used_memory: int
    results: int
    leaves: int
    corpora: int
    checkpoints: int
    verification_runs: int
    jobs_open: dict[str, int]
    sampled: int
    bytes_per_result: float | None  # result + audit + job record + index entries
    bytes_per_leaf: float | None  # leaf + log index entry + its share of the tree's hashes
    log_shards: int = 1
    primaries: dict[str, int] = field(default_factory=dict)  # a cluster's: node -> slots
    jobs_form: int = 2  # the form of its job records (store.layout); 1 needs migrating

    def bytes_for(self, results: int) -> float | None:
        """Memory ``results`` stored results and their leaves would take, by this sample."""
        if self.bytes_per_result is None or self.bytes_per_leaf is None:
            return None
        return results * (self.bytes_per_result + self.bytes_per_leaf)

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


class Usage:
    """Measures a store (read-only)."""

    def __init__(self, ctx: StoreContext) -> None:
        self._ctx = ctx

    def measure(self, sample: int = 200) -> StoreUsage:
        """Counts, and bytes per result from up to ``sample`` of the most recent results."""
        client, k = self._ctx.client, self._ctx.keys
        with translated(client, "measuring the store"):
            info, memory = self._info("server"), self._info("memory")
            shards = k.shards
            each = -(-sample // len(shards))
            pipe = client.pipeline(transaction=False)
            pipe.zcard(k.corpora).zcard(k.log_checkpoints).zcard(k.verifications)
            for shard in shards:
                pipe.zcard(shard.audits_by_time).llen(shard.log_leaves)
                pipe.zcard(shard.jobs_queued).zcard(shard.jobs_running)
                pipe.zrevrange(shard.audits_by_time, 0, each - 1)
            corpora, checkpoints, runs, *rows = pipe.execute()
            per_shard = [rows[i:i + 5] for i in range(0, len(rows), 5)]
            keys = [text(key) for row in per_shard for key in row[4]][:sample]
            leaves = [int(row[1]) for row in per_shard]
            per_result = self._bytes_per_result(keys)
            per_leaf = self._bytes_per_leaf(leaves)
        return StoreUsage(
            redis_version=str(info.get("redis_version", "?")),
            used_memory=int(memory.get("used_memory", 0)),
            results=sum(int(row[0]) for row in per_shard), leaves=sum(leaves),
            corpora=int(corpora), checkpoints=int(checkpoints), verification_runs=int(runs),
            jobs_open={"queued": sum(int(row[2]) for row in per_shard),
                       "running": sum(int(row[3]) for row in per_shard)},
            sampled=len(keys), bytes_per_result=per_result, bytes_per_leaf=per_leaf,
            log_shards=len(shards), primaries=self._slots(), jobs_form=k.jobs_form)

    def _slots(self) -> dict[str, int]:
        """How many slots each primary of a cluster serves, as the client last learnt."""
        client = self._ctx.client
        if not cluster.is_cluster(client):
            return {}
        served: dict[str, int] = {}
        for owners in client.nodes_manager.slots_cache.values():
            if owners:
                served[owners[0].name] = served.get(owners[0].name, 0) + 1
        return dict(sorted(served.items()))

    def _info(self, section: str) -> dict[str, Any]:
        """``INFO section``, or nothing from a Redis-compatible server without it; of a
        cluster, the first primary's with ``used_memory`` summed over every primary."""
        client = self._ctx.client
        try:
            if not cluster.is_cluster(client):
                return dict(client.info(section))
            each = list(client.info(section, target_nodes=client.PRIMARIES).values())
        except ResponseError:
            return {}
        merged = dict(each[0]) if each else {}
        if "used_memory" in merged:
            merged["used_memory"] = sum(int(info.get("used_memory", 0)) for info in each)
        return merged

    def _memory(self, names: list[str]) -> list[int] | None:
        """``MEMORY USAGE`` of each key (0 if absent); None if the server has no MEMORY."""
        pipe = self._ctx.client.pipeline(transaction=False)
        for name in names:
            pipe.memory_usage(name, samples=0)
        try:
            return [int(n or 0) for n in pipe.execute()]
        except ResponseError:  # a Redis-compatible server without MEMORY USAGE
            return None

    def _bytes_per_result(self, keys: list[str]) -> float | None:
        if not keys:
            return None
        k = self._ctx.keys
        found = self._memory([k.result(key) for key in keys])  # each frames its audit
        per_job = self._bytes_per_job()
        if found is None or per_job is None:
            return None
        return sum(found) / len(keys) + per_job + _INDEX_ENTRY

    def _bytes_per_job(self) -> float | None:
        """A job record's share of its shard's spec, state, error and asker hashes
        (sampled)."""
        client, shards = self._ctx.client, self._ctx.keys.shards
        pipe = client.pipeline(transaction=False)
        for shard in shards:
            pipe.hlen(shard.job_states)
        jobs = sum(int(n) for n in pipe.execute())
        if not jobs:
            return 0.0
        pipe = client.pipeline(transaction=False)
        for shard in shards:
            for name in (shard.job_specs, shard.job_states, shard.job_errors,
                         shard.job_askers):
                pipe.memory_usage(name, samples=_HASH_SAMPLES)
        try:
            return sum(int(n or 0) for n in pipe.execute()) / jobs
        except ResponseError:
            return None

    def _bytes_per_leaf(self, leaves: list[int]) -> float | None:
        """Memory of every shard's leaves, index and tiles, per leaf."""
        if not sum(leaves):
            return None
        names = []
        for shard, count in zip(self._ctx.keys.shards, leaves, strict=True):
            names += [shard.log_leaves, shard.log_index]
            names += [shard.log_hashes(level, chunk) for level in range(count.bit_length())
                      for chunk in range(((count >> level) + LOG_CHUNK - 1) // LOG_CHUNK)]
        found = self._memory(names)
        return None if found is None else sum(found) / sum(leaves)


def describe(usage: StoreUsage) -> str:
    """The lines ``rookhaven store info`` prints."""
    mib = 1 << 20
    lines = [f"redis {usage.redis_version}, {usage.used_memory / mib:,.1f} MiB used; "
             f"{usage.log_shards} log shard{'s' if usage.log_shards != 1 else ''}"
             + (f"; a cluster of {len(usage.primaries)} primaries (slots: "
                + ", ".join(f"{node} {n:,}" for node, n in usage.primaries.items()) + ")"
                if usage.primaries else ""),
             f"results {usage.results:,}, log leaves {usage.leaves:,}, corpora "
             f"{usage.corpora}, checkpoints {usage.checkpoints}, verification runs "
             f"{usage.verification_runs}, jobs queued {usage.jobs_open['queued']} / running "
             f"{usage.jobs_open['running']}"]
    if usage.jobs_form < 2:
        lines.append("job records of an earlier Rookhaven's form: jobs cannot be submitted or "
                     "run until `rookhaven store migrate` (ops/runbook.md, Upgrading)")
    if usage.bytes_per_result is None or usage.bytes_per_leaf is None:
        lines.append("bytes per result: unknown (no result stored, or the server has no "
                     "MEMORY USAGE)")
        return "\n".join(lines)
    total = usage.bytes_for(10**9) or 0.0
    lines += [f"bytes per result {usage.bytes_per_result:,.0f} (the result framing its audit, job "
              f"record, index entries; {usage.sampled} sampled), per log leaf "
              f"{usage.bytes_per_leaf:,.0f}",
              f"10^9 results would take {total / (1 << 40):,.1f} TiB: "
              f"{-(-total // (64 << 30)):,.0f} nodes of 64 GiB before replicas and headroom"]
    return "\n".join(lines)
