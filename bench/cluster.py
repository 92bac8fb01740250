"""Jobs/s through a Redis Cluster store against a single Redis, same machine, same run.

Run by hand (not a test); it starts its own servers on free ports and stops them after:

    .venv/bin/python bench/cluster.py --jobs 4000 --rounds 3

A single redis-server (flat store, as today) and a cluster of three primaries, each with a
replica (a 64-shard store). Each round submits ``--jobs`` jobs (``Pipeline.submit_many``)
and executes them in batches of 100 as a worker takes a message (the workers' own
``Executor``, in this process), on each store in turn, alternating which goes first. Then,
on the cluster store: bytes per stored result and per log leaf (MEMORY USAGE, as `rookhaven
store info` reads them), and the time to integrate and sign a checkpoint set, from which
the 10^9-result projection in docs/operations.md is made.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from benchstore import bench_settings, query_texts  # noqa: E402

from rookhaven import RetrievalRequest  # noqa: E402
from rookhaven.corpusfile import load_corpus  # noqa: E402
from rookhaven.pipeline import Executor, Pipeline  # noqa: E402
from rookhaven.pipeline.fake import RecordingDispatcher  # noqa: E402
from rookhaven.store import Store  # noqa: E402
from rookhaven.store.usage import describe  # noqa: E402
from rookhaven.transparency import checkpoints  # noqa: E402
from rookhaven.transparency.note import generate_key  # noqa: E402
from tests.conftest import private_redis  # noqa: E402
from tests.integration.clusters import cluster  # noqa: E402


def run_jobs(pipe: Pipeline, executor: Executor, queries: list[str], n: int, tag: str,
             batch: int) -> float:
    """Submit and execute ``n`` new jobs; jobs per second, submit and execute together."""
    requests = [RetrievalRequest(query=queries[i % len(queries)], recall_budget=10,
                                 seed=f"{tag}-{i}") for i in range(n)]
    started = time.perf_counter()
    ids = [ref.job_id for ref in pipe.submit_many(requests, "bench")]
    for at in range(0, n, batch):
        executor.run(ids[at:at + batch], "bench")
    return n / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", type=Path, default=ROOT.parent / "shared/datasets/npl")
    parser.add_argument("--jobs", type=int, default=4000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--batch", type=int, default=100)
    args = parser.parse_args()
    docs = load_corpus(args.dataset / "corpus.jsonl", max_docs=10**6)
    queries = query_texts(args.dataset)
    private, _ = generate_key("rookhaven.bench/cluster", bytes(range(32)))
    with tempfile.TemporaryDirectory() as scratch, private_redis(Path(scratch)) as single:
        nodes = cluster(Path(scratch) / "cluster")
        topology = next(nodes)
        try:
            stores = {}
            for name, url in (("single", single), ("cluster", topology.url)):
                settings = bench_settings(url, "rh-bench")
                store = Store.from_settings(settings)
                pipe = Pipeline(store, RecordingDispatcher(), settings)
                pipe.add_corpus(docs, "bench")
                executor = Executor(store, settings)
                run_jobs(pipe, executor, queries, 200, f"{name}-warm", args.batch)
                stores[name] = (store, pipe, executor)
            rates: dict[str, list[float]] = {"single": [], "cluster": []}
            for r in range(args.rounds):
                order = ["single", "cluster"][::1 if r % 2 == 0 else -1]
                for name in order:
                    _, pipe, executor = stores[name]
                    rates[name].append(run_jobs(pipe, executor, queries, args.jobs,
                                                f"{name}-{r}", args.batch))
                print(f"round {r + 1}: " + ", ".join(
                    f"{name} {rates[name][-1]:,.0f} jobs/s" for name in ("single", "cluster")),
                    flush=True)
            ratios = [c / s for s, c in zip(rates["single"], rates["cluster"], strict=True)]
            print(f"cluster / single, per round: {', '.join(f'{x:.2f}' for x in ratios)}; "
                  f"median {statistics.median(ratios):.2f}")
            store = stores["cluster"][0]
            print(describe(store.usage.measure(sample=500)))
            times = []
            for _ in range(3):
                started = time.perf_counter()
                checkpoints.sign_now(store, private)
                times.append(time.perf_counter() - started)
            leaves = sum(log.size() for log in store.logs)
            print(f"checkpoint set of {len(store.logs)} shards over {leaves:,} leaves: "
                  f"{', '.join(f'{t * 1000:.0f}' for t in times)} ms (first integrates)")
        finally:
            next(nodes, None)


if __name__ == "__main__":
    main()
