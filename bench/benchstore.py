"""What the benches that use Redis share: a store under a bench's own key prefix, a BEIR
collection's query texts, and deleting everything under the prefix afterwards."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from rookhaven.config import Settings
from rookhaven.store import Store


def bench_settings(redis: str, prefix: str, **more: str) -> Settings:
    """Settings for a bench writing under ``prefix`` of the Redis at ``redis``, quiet; ``more``
    names other settings (``ROOKHAVEN_LOG_SHARDS="3"``)."""
    return Settings.from_mapping({"ROOKHAVEN_REDIS_URL": redis, "ROOKHAVEN_KEY_PREFIX": prefix,
                                  "ROOKHAVEN_LOG_LEVEL": "warning", **more})


def query_texts(dataset: Path, name: str = "queries.jsonl") -> list[str]:
    """The query texts of a BEIR directory's query file ``name``, in file order."""
    lines = (dataset / name).read_bytes().splitlines()
    return [orjson.loads(line)["text"] for line in lines if line.strip()]


def delete_prefix(store: Store, prefix: str) -> None:
    """Delete every key under ``prefix`` (the bench's own), a thousand at a time."""
    keys = list(store.client.scan_iter(match=f"{prefix}*", count=1000))
    for at in range(0, len(keys), 1000):
        store.client.delete(*keys[at: at + 1000])


def redis_commands(client: Any) -> dict[str, tuple[int, int]]:
    """Calls and microseconds so far per command of the Redis ``client`` talks to (a
    script's own commands are counted in its EVALSHA too)."""
    stats = client.info("commandstats")
    return {name.removeprefix("cmdstat_"): (int(v["calls"]), int(v["usec"]))
            for name, v in stats.items()}


def print_commands(before: dict[str, tuple[int, int]], after: dict[str, tuple[int, int]],
                   jobs: int) -> None:
    """Each command's calls and microseconds a job between two ``redis_commands``."""
    rows = sorted(((name, calls - before.get(name, (0, 0))[0],
                    usec - before.get(name, (0, 0))[1])
                   for name, (calls, usec) in after.items()), key=lambda row: -row[2])
    for name, calls, usec in rows:
        if calls > 0:
            print(f"  {name:<16} {calls / jobs:7.3f} calls {usec / jobs:7.1f} us a job")
