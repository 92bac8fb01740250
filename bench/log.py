"""The transparency log at a million leaves: integrate, sign, grow and prove.

Run by hand (not a test), against a Redis database nothing else uses; it writes only under
its own key prefix and deletes those keys afterwards:

    redis-server --port 6391 --save "" --appendonly no --daemonize yes
    .venv/bin/python bench/log.py --redis redis://127.0.0.1:6391/14

A log of ``--leaves`` leaves, its leaves and level-0 tiles written directly in COMPLETE's
layout: ``integrate`` from scratch, signing a checkpoint when already integrated,
integrating and signing after 1,000 more results stored by ``put``, and inclusion proofs
(``log.inclusion`` + ``merkle.verify_inclusion``) of ``--proofs`` random leaves. What the
log costs a stored result is `bench/job_split.py`'s "log leaves" stage (the leaf built and
hashed) and COMPLETE's share in `bench/queue_commands.py --per-script`.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import orjson  # noqa: E402
import redis  # noqa: E402

from rookhaven.store import Store  # noqa: E402
from rookhaven.store.keys import LOG_CHUNK, ShardKeys  # noqa: E402
from rookhaven.transparency import checkpoints, merkle  # noqa: E402
from rookhaven.transparency.leaf import leaf_for  # noqa: E402
from rookhaven.transparency.note import generate_key  # noqa: E402

CORPUS = "sha256:" + "c" * 64
ENGINE = {"name": "bm25", "version": "1.2", "params": {"b": 0.75, "k1": 1.2},
          "analyzer": "sha256:" + "a" * 64}


def key_of(tag: str, i: int) -> str:
    return "sha256:" + hashlib.sha256(f"{tag}:{i}".encode()).hexdigest()


def results(n: int, tag: str) -> list[tuple[str, bytes, bytes]]:
    """``n`` distinct (key, result, audit): results of 2-4 KB, audits naming an engine."""
    rng = random.Random(tag)
    made = []
    for i in range(n):
        hits = [{"doc_id": f"doc-{rng.randrange(10**6):07d}", "rank": r + 1,
                 "score": round(rng.random() * 20, 6),
                 "fields": {"title": f"report {rng.randrange(999)}"}}
                for r in range(rng.randrange(18, 36))]
        audit = orjson.dumps({"corpus_digest": CORPUS, "engine": ENGINE, "seed": f"{tag}{i}",
                              "query": f"crane tide {i}"}, option=orjson.OPT_SORT_KEYS)
        result = orjson.dumps({"hits": hits, "audit": orjson.Fragment(audit)},
                              option=orjson.OPT_SORT_KEYS)
        made.append((key_of(tag, i), result, audit))
    return made


def delete_prefix(client: Any, prefix: str) -> None:
    batch = []
    for found in client.scan_iter(match=f"{prefix}:*", count=5000):
        batch.append(found)
        if len(batch) >= 5000:
            client.unlink(*batch)
            batch = []
    if batch:
        client.unlink(*batch)


def build_log(client: Any, keys: ShardKeys, n: int) -> list[str]:
    """Write ``n`` leaves, their index and level-0 tiles as COMPLETE does; the leaf keys."""
    stamp = f"{time.time():.3f}"
    made = []
    for start in range(0, n, LOG_CHUNK):
        stop = min(n, start + LOG_CHUNK)
        leaves, hashes, index = [], [], {}
        for i in range(start, stop):
            key = key_of("million", i)
            result = hashlib.sha256(key.encode()).digest()  # stands for the result bytes
            leaf = leaf_for(key, result, result[::-1], CORPUS, stamp).encode()
            leaves.append(leaf)
            hashes.append(merkle.leaf_hash(leaf))
            index[key] = i
            made.append(key)
        pipe = client.pipeline(transaction=False)
        for at in range(0, len(leaves), 8192):
            pipe.rpush(keys.log_leaves, *leaves[at:at + 8192])
        pipe.hset(keys.log_index, mapping=index)
        pipe.append(keys.log_hashes(0, start // LOG_CHUNK), b"".join(hashes))
        pipe.execute()
    return made


def million(client: Any, prefix: str, n: int, proofs: int) -> list[tuple[str, str]]:
    private, _ = generate_key("rookhaven.bench/log", bytes(range(32)))
    store = Store(client, f"{prefix}:million")
    started = time.perf_counter()
    keys = build_log(client, store.keys.shards[0], n)
    print(f"built a {n:,}-leaf log in {time.perf_counter() - started:.1f} s", flush=True)
    rows = []

    started = time.perf_counter()
    assert store.log.integrate() == n
    rows.append((f"integrate {n:,} leaves from scratch", f"{time.perf_counter() - started:.2f} s"))

    times = []
    for _ in range(5):
        started = time.perf_counter()
        note = checkpoints.sign_now(store, private)
        times.append(time.perf_counter() - started)
    rows.append((f"sign a checkpoint of {n:,} (integrated; median of 5)",
                 f"{statistics.median(times) * 1000:.1f} ms"))

    for key, result, audit in results(1000, "after"):
        store.results.put(key, CORPUS, result, audit)
        keys.append(key)
    started = time.perf_counter()
    size = store.log.integrate()
    integrated = time.perf_counter() - started
    note = checkpoints.sign_now(store, private)
    both = time.perf_counter() - started
    assert size == n + 1000 and f"\n{size}\n" in note
    rows.append(("1,000 more stored: integrate, then + sign",
                 f"{integrated * 1000:.1f} ms, {both * 1000:.1f} ms"))

    rng = random.Random(7)
    root = store.log.root(size)
    picked = [rng.randrange(size) for _ in range(proofs)]
    leaf_hashes = {i: store.log.leaf_hashes(i, i + 1) for i in picked}
    times = []
    for index in picked:
        started = time.perf_counter()
        proof = store.log.inclusion(index, size)
        ok = merkle.verify_inclusion(index, size, leaf_hashes[index], proof, root)
        times.append(time.perf_counter() - started)
        assert ok, index
    rows.append((f"inclusion + verify, {proofs:,} random leaves of {size:,}",
                 f"median {statistics.median(times) * 1000:.2f} ms, "
                 f"p99 {statistics.quantiles(times, n=100)[98] * 1000:.2f} ms"))

    times = []
    for index in picked[:200]:
        started = time.perf_counter()
        found = checkpoints.inclusion(store, keys[index], note)
        assert found.verified
        times.append(time.perf_counter() - started)
    rows.append(("checkpoints.inclusion by key (what `log prove` does), 200 leaves",
                 f"median {statistics.median(times) * 1000:.2f} ms"))
    memory = client.info("memory")["used_memory"]
    rows.append((f"Redis used_memory with the {n:,}-leaf log", f"{memory / 2**20:,.0f} MiB"))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--redis", default="redis://127.0.0.1:6391/14")
    parser.add_argument("--leaves", type=int, default=1_000_000)
    parser.add_argument("--proofs", type=int, default=1000)
    args = parser.parse_args()

    client = redis.Redis.from_url(args.redis)
    prefix = f"rh-bench-log-{os.getpid()}"
    if client.dbsize():
        raise SystemExit(f"{args.redis} holds keys; give this bench an empty database")
    rows: list[tuple[str, str]] = []
    try:
        rows += million(client, prefix, args.leaves, args.proofs)
    finally:
        delete_prefix(client, prefix)
        client.close()
    width = max(len(name) for name, _ in rows)
    print(f"\n{'measure':<{width}}  value\n{'-' * width}  {'-' * 40}")
    for name, value in rows:
        print(f"{name:<{width}}  {value}")


if __name__ == "__main__":
    main()
