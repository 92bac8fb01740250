"""What the benches that use Redis share: a store under a bench's own key prefix, a BEIR
collection's query texts, and deleting everything under the prefix afterwards."""

from __future__ import annotations

from pathlib import Path

import orjson

from rookhaven.config import Settings
from rookhaven.store import Store


def bench_settings(redis: str, prefix: str, **more: str) -> Settings:
    """Settings for a bench writing under ``prefix`` of the Redis at ``redis``, quiet; ``more``
    names other settings (``ROOKHAVEN_LOG_SHARDS="3"``)."""
    return Settings.from_mapping({"ROOKHAVEN_REDIS_URL": redis, "ROOKHAVEN_KEY_PREFIX": prefix,
                                  "ROOKHAVEN_LOG_LEVEL": "warning", **more})


def query_texts(dataset: Path) -> list[str]:
    """The query texts of a BEIR directory's queries.jsonl, in file order."""
    lines = (dataset / "queries.jsonl").read_bytes().splitlines()
    return [orjson.loads(line)["text"] for line in lines if line.strip()]


def delete_prefix(store: Store, prefix: str) -> None:
    """Delete every key under ``prefix`` (the bench's own), a thousand at a time."""
    keys = list(store.client.scan_iter(match=f"{prefix}*", count=1000))
    for at in range(0, len(keys), 1000):
        store.client.delete(*keys[at: at + 1000])
