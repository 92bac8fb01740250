"""Cost of the transparency log: storing results with and without it, and a 1M-leaf tree.

Run by hand (not a test), against a Redis database nothing else uses; it writes only under
its own key prefix and deletes those keys afterwards:

    /work/main/.venv/bin/python bench/log.py --redis redis://127.0.0.1:6379/14

Measured, in one run:
1. append: ``store.results.put`` of N distinct results (2-4 KB result bytes, no job
   records) through the real COMPLETE script, against the same through a copy of COMPLETE
   with the log block removed (registered on a separate StoreContext/ResultStore here
   only), alternating three times; and a third row that also skips building the leaf in
   Python, so the whole cost of the log is visible.
2. bulk jobs as a worker runs them (``Executor.run`` over batches of 100 real retrieval jobs
   on a 5,000-document corpus), with the real COMPLETE and with the copy without the log
   block, in alternating rounds: the log's share of bulk throughput.
3. a 1M-leaf log, its leaves and level-0 tiles written directly in COMPLETE's layout:
   ``integrate`` from scratch, signing a checkpoint when already integrated, integrating
   and signing after 1,000 more results stored by ``put``, and inclusion proofs
   (``log.inclusion`` + ``merkle.verify_inclusion``) of 1,000 random leaves.

bench/pipeline.py has no switch for the log: it measures the pipeline with the log only.
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

from rookhaven.store import Store, scripts  # noqa: E402
from rookhaven.store.context import StoreContext, text  # noqa: E402
from rookhaven.store.keys import LOG_CHUNK, Keys, ShardKeys  # noqa: E402
from rookhaven.store.results import ResultStore  # noqa: E402
from rookhaven.transparency import checkpoints, merkle  # noqa: E402
from rookhaven.transparency.leaf import leaf_for  # noqa: E402
from rookhaven.transparency.note import generate_key  # noqa: E402

CORPUS = "sha256:" + "c" * 64
ENGINE = {"name": "bm25", "version": "1.2", "params": {"b": 0.75, "k1": 1.2},
          "analyzer": "sha256:" + "a" * 64}
LOG_BLOCK = """  if redis.call('HEXISTS', log_index, ARGV[6]) == 0 then
    local n = redis.call('RPUSH', leaves, ARGV[7]) - 1
    redis.call('HSET', log_index, ARGV[6], n)
    redis.call('APPEND', ARGV[9] .. math.floor(n / tonumber(ARGV[10])), ARGV[8])
  end
"""


def without_log() -> str:
    """COMPLETE with its log block cut out (refused if the script no longer has it)."""
    if LOG_BLOCK not in scripts.COMPLETE:
        raise SystemExit("store.scripts.COMPLETE changed: update LOG_BLOCK in bench/log.py")
    return scripts.COMPLETE.replace(LOG_BLOCK, "")


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


def bare_put(ctx: StoreContext, key: str, result: bytes, audit: bytes) -> str:
    """ResultStore.put without building a leaf: what storing cost before the log."""
    k = ctx.shard(key)
    keys = [*ctx.job_keys(key), k.audit(key), k.audits_by_time, k.audits_by_corpus(CORPUS),
            k.violations, k.log_leaves, k.log_index]
    return text(ctx.complete(keys=keys, args=[*ctx.job_args(ctx.now(), key), result, audit,
                                              key, b"", b"", k.log_hashes(0, 0)[:-1],
                                              LOG_CHUNK]))


def server_time(client: Any) -> tuple[int, int]:
    """(calls, microseconds) Redis has spent in EVALSHA so far (INFO commandstats)."""
    found = client.info("commandstats").get("cmdstat_evalsha", {})
    return int(found.get("calls", 0)), int(found.get("usec", 0))


def putter(client: Any, name: str, prefix: str) -> Any:
    """The put function of one variant, on its own StoreContext under ``prefix``."""
    ctx = StoreContext(client, prefix, time.time)
    if name == "with log":
        return ResultStore(ctx).put
    ctx.complete = client.register_script(without_log())
    if name == "without log":
        return ResultStore(ctx).put
    return lambda key, _corpus, result, audit: bare_put(ctx, key, result, audit)


def append_cost(client: Any, prefix: str, n: int, rounds: int,
                block: int = 500) -> list[tuple[str, str]]:
    """Each round stores ``n`` results per variant, interleaved ``block`` puts at a time
    (the order rotating), so a noisy neighbour slows every variant alike."""
    names = ["with log", "without log", "without log or leaf"]
    rates: dict[str, list[float]] = {name: [] for name in names}
    server: dict[str, list[float]] = {name: [] for name in names}
    for r in range(-1, rounds):  # round -1 warms up the client, the server and both scripts
        size = n if r >= 0 else min(n, 2000)
        runs = {name: (f"{prefix}:append-{r}-{i}", results(size, f"{r}-{i}"))
                for i, name in enumerate(names)}
        puts = {name: putter(client, name, run_prefix)
                for name, (run_prefix, _) in runs.items()}
        wall = dict.fromkeys(names, 0.0)
        spent = {name: [0, 0] for name in names}
        for b, at in enumerate(range(0, size, block)):
            for name in names[b % 3:] + names[:b % 3]:
                put, batch = puts[name], runs[name][1][at:at + block]
                calls, usec = server_time(client)
                started = time.perf_counter()
                for key, result, audit in batch:
                    put(key, CORPUS, result, audit)
                wall[name] += time.perf_counter() - started
                calls_after, usec_after = server_time(client)
                spent[name][0] += calls_after - calls
                spent[name][1] += usec_after - usec
        for name, (run_prefix, _) in runs.items():
            leaves = Keys(run_prefix).shards[0].log_leaves  # each run's store is flat
            assert client.llen(leaves) == (size if name == "with log" else 0)
            delete_prefix(client, run_prefix)
        if r < 0:
            continue
        for name in names:
            rates[name].append(size / wall[name])
            # Other clients' EVALSHAs would count too: run on an otherwise idle Redis.
            server[name].append(spent[name][1] / max(1, spent[name][0]))
        print(f"append round {r + 1}: " + ", ".join(
            f"{name} {rates[name][-1]:.0f}/s" for name in names), flush=True)
    others = int(client.info("clients")["connected_clients"]) - 1
    if others > 0:
        print(f"note: {others} other client(s) connected: the script times may include theirs",
              flush=True)
    median = {name: statistics.median(rates[name]) for name in names}
    out = [(f"put, {name} ({rounds} x {n:,}, median)",
            f"{median[name]:,.0f}/s (range {min(rates[name]):,.0f}-{max(rates[name]):,.0f}); "
            f"{statistics.median(server[name]):.0f} us in the script")
           for name in names]
    for base in names[1:]:
        # Paired by round: the variants of one round ran interleaved, under the same load.
        paired = [a / b for a, b in zip(rates["with log"], rates[base], strict=True)]
        ratio = statistics.median(paired)
        out.append((f"with log / {base}, median of per-round ratios",
                    f"x{ratio:.3f} ({1 - ratio:.1%} slower; rounds "
                    + ", ".join(f"{p:.3f}" for p in paired) + ")"))
    return out


class _NoLeaf:
    @staticmethod
    def encode() -> bytes:
        return b""


def _no_leaf(*_: Any, **__: Any) -> _NoLeaf:
    return _NoLeaf()


def bulk_jobs(client: Any, prefix: str, n: int, rounds: int,
              batch: int = 100) -> list[tuple[str, str]]:
    """Bulk work as a worker does it: ``Executor.run`` over batches of real retrieval jobs
    (job records, ranking, result, audit, ledger), with the real COMPLETE and with the copy
    whose log block is cut out, in alternating rounds on one corpus."""
    from rookhaven import Document
    from rookhaven.config import Settings
    from rookhaven.models import RetrievalRequest
    from rookhaven.pipeline import Executor, Pipeline, RecordingDispatcher
    from rookhaven.store import Store

    words = ["crane", "berth", "tide", "delay", "pilot", "tug", "cargo", "reefer", "quay",
             "gantry", "customs", "vessel", "mooring", "draft", "hazard", "lashing"]
    rng = random.Random(5)
    docs = [Document(id=f"d{i:05d}", text=" ".join(rng.choice(words) for _ in range(40)))
            for i in range(5000)]
    settings = Settings(engine="bm25@2", batch_size=batch)
    from rookhaven.store import results as results_module

    real_leaf_for = results_module.leaf_for
    rates: dict[str, list[float]] = {"with log": [], "without log": []}
    for round_ in range(rounds):
        for name in (["with log", "without log"] if round_ % 2 == 0
                     else ["without log", "with log"]):
            store = Store(client, f"{prefix}:jobs-{round_}-{name.replace(' ', '')}")
            # Without the log: neither the script's log block nor the leaf built in Python.
            results_module.leaf_for = real_leaf_for if name == "with log" else _no_leaf
            if name == "without log":
                store._ctx.complete = client.register_script(without_log())
            pipe = Pipeline(store, RecordingDispatcher(), settings)
            pipe.add_corpus(docs, "bench")
            ids = [r.job_id for r in pipe.submit_many(
                [RetrievalRequest(query=f"{rng.choice(words)} {rng.choice(words)} and "
                                  f"{rng.choice(words)}", seed=f"{name}{round_}-{i}",
                                  recallBudget=10) for i in range(n)], "bench")]
            executor = Executor(store, settings)
            executor.run(ids[:10], "warm")  # the index is built outside the timing
            started = time.perf_counter()
            for at in range(10, n, batch):
                executor.run(ids[at:at + batch], "bench")
            rates[name].append((n - 10) / (time.perf_counter() - started))
    results_module.leaf_for = real_leaf_for
    ratios = [w / o for w, o in zip(rates["with log"], rates["without log"], strict=True)]
    return [
        (f"bulk jobs, with log ({rounds} x {n}, median)",
         f"{statistics.median(rates['with log']):,.0f} jobs/s"),
        (f"bulk jobs, without log block or leaf ({rounds} x {n}, median)",
         f"{statistics.median(rates['without log']):,.0f} jobs/s"),
        ("bulk jobs, with / without, median of per-round ratios",
         f"x{statistics.median(ratios):.3f} (rounds {', '.join(f'{r:.3f}' for r in ratios)})"),
    ]


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
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/14")
    parser.add_argument("--results", type=int, default=20_000, help="results per append run")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=3000, help="jobs per bulk round")
    parser.add_argument("--leaves", type=int, default=1_000_000)
    parser.add_argument("--proofs", type=int, default=1000)
    args = parser.parse_args()

    client = redis.Redis.from_url(args.redis)
    prefix = f"rh-bench-log-{os.getpid()}"
    if client.dbsize():
        raise SystemExit(f"{args.redis} holds keys; give this bench an empty database")
    rows: list[tuple[str, str]] = []
    try:
        rows += append_cost(client, prefix, args.results, args.rounds)
        rows += bulk_jobs(client, prefix, args.jobs, args.rounds + 1)
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
