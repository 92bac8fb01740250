"""The store's layout, recorded once under ``<prefix>:layout``: flat, or how many log shards,
and the form of its job records.

Read by every process before its first key: a store keeps the layout it was created with,
so every process finds every key where the first one put it. A store with data and no
record (made before layouts were recorded) is flat. Job records of form 2 (``"jobs": 2``,
every store made now) are fields of per-shard hashes; form 1 (no ``jobs`` field: stores
made before) a hash per job, moved by ``rookhaven store migrate`` (store.migration), which
then records form 2. The record's ``version`` stays 1: an earlier release, which refuses
any other, can still read the store's results and log to replay them (and the audits it
stored itself: it reads an audit from a key of its own, where today's read it from the
result that frames it, ADR 0064).
"""

from __future__ import annotations

from typing import Any

import orjson

from ..config import MAX_SHARDS
from ..errors import ConfigError
from .cluster import is_cluster
from .keys import Keys, shard_tags

# Keys only a flat store has: any of them present means the store predates the record.
_FLAT_MARKS = ("ledger", "counters", "log:leaves", "corpora")
JOBS_FORMS = (1, 2)
CURRENT = 2  # the form of job records this release writes


def resolve(client: Any, prefix: str, wanted: int | None) -> Keys:
    """The keys of the store under ``prefix``, recording the layout if it is new: ``wanted``
    log shards (None: flat). ConfigError if the store was made with another number."""
    flat = Keys(prefix)
    recorded = client.get(flat.layout)
    if recorded is None:
        legacy = any(client.exists(f"{prefix}:{mark}") for mark in _FLAT_MARKS)
        layout: dict[str, Any] = {
            "version": 1, "tags": None if legacy or wanted is None else list(shard_tags(wanted))}
        if not legacy:
            layout["jobs"] = CURRENT
        client.set(flat.layout, orjson.dumps(layout), nx=True)
        recorded = client.get(flat.layout)  # another process may have recorded it first
    keys = parse(prefix, recorded)
    if not keys.sharded and is_cluster(client):
        raise ConfigError(f"the store under prefix {prefix!r} has the flat layout, whose "
                          "scripts touch keys in many slots: a Redis Cluster cannot hold it. "
                          "Use another ROOKHAVEN_KEY_PREFIX for a new, sharded store")
    if wanted is not None and len(keys.shards) != wanted:
        have = f"{len(keys.shards)} log shard(s)" if keys.sharded else "the flat layout"
        raise ConfigError(
            f"the store under prefix {prefix!r} was created with {have}; "
            f"ROOKHAVEN_LOG_SHARDS={wanted} cannot change that: unset it, or use another "
            "ROOKHAVEN_KEY_PREFIX for a new store")
    return keys


def parse(prefix: str, recorded: bytes) -> Keys:
    """The Keys a layout record describes; ConfigError if it is not one."""
    try:
        layout = orjson.loads(recorded)
        tags = layout["tags"]
        # A record that says version 2 was written by this release's first builds.
        jobs = layout.get("jobs", 2 if layout["version"] == 2 else 1)
        valid = layout["version"] in (1, 2) and jobs in JOBS_FORMS and (tags is None or (
            isinstance(tags, list) and 1 <= len(tags) <= MAX_SHARDS
            and all(isinstance(t, str) and t and "{" not in t and "}" not in t
                    for t in tags)))
    except (orjson.JSONDecodeError, KeyError, TypeError):
        valid = False
    if not valid:
        raise ConfigError(f"{prefix}:layout does not hold a layout Rookhaven wrote "
                          f"({recorded[:80]!r}); restore it from a backup")
    return Keys(prefix, None if tags is None else tuple(tags), jobs)


def record(client: Any, keys: Keys, jobs: int) -> None:
    """Record job-record form ``jobs`` in the layout of the store ``keys`` name."""
    client.set(keys.layout, orjson.dumps({
        "version": 1, "tags": None if keys.tags is None else list(keys.tags), "jobs": jobs}))
