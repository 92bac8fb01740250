"""The store's layout, recorded once under ``<prefix>:layout``: flat, or how many log shards,
and the version of its job records.

Read by every process before its first key: a store keeps the layout it was created with,
so every process finds every key where the first one put it. A store with data and no
record (made before layouts were recorded) is flat, version 1. Version 2 (every store made
now) keeps job records as fields of per-shard hashes; a version-1 store's jobs are moved
there by ``rookhaven store migrate`` (store.migration), which then records version 2.
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
VERSIONS = (1, 2)
CURRENT = 2


def resolve(client: Any, prefix: str, wanted: int | None) -> Keys:
    """The keys of the store under ``prefix``, recording the layout if it is new: ``wanted``
    log shards (None: flat). ConfigError if the store was made with another number."""
    flat = Keys(prefix)
    recorded = client.get(flat.layout)
    if recorded is None:
        legacy = any(client.exists(f"{prefix}:{mark}") for mark in _FLAT_MARKS)
        layout = {"version": 1 if legacy else CURRENT,
                  "tags": None if legacy or wanted is None else list(shard_tags(wanted))}
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
        version = layout["version"]
        valid = version in VERSIONS and (tags is None or (
            isinstance(tags, list) and 1 <= len(tags) <= MAX_SHARDS
            and all(isinstance(t, str) and t and "{" not in t and "}" not in t
                    for t in tags)))
    except (orjson.JSONDecodeError, KeyError, TypeError):
        valid = False
    if not valid:
        raise ConfigError(f"{prefix}:layout does not hold a layout Rookhaven wrote "
                          f"({recorded[:80]!r}); restore it from a backup")
    return Keys(prefix, None if tags is None else tuple(tags), version)


def record(client: Any, keys: Keys, version: int) -> None:
    """Record ``version`` in the layout of the store ``keys`` name (its tags unchanged)."""
    client.set(keys.layout, orjson.dumps({
        "version": version, "tags": None if keys.tags is None else list(keys.tags)}))
