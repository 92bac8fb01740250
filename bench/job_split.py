"""Where a job's time goes on a worker: each step of ``Executor.run``, timed in one process.

Run by hand (not a test), against a Redis you name; it writes under its own key prefix
and deletes it afterwards:

    .venv/bin/python bench/job_split.py --redis redis://127.0.0.1:6379/0 \
        --dataset ../shared/datasets/npl --jobs 3000 --batch 100

It records ``--jobs`` jobs (as ``submit_many`` would, without sending messages), then runs
them in batches through the worker's own ``Executor`` with its store methods wrapped in
timers: claim (START, one round trip per batch), compute and encode (the engine's
``result_data`` and canonical bytes), queue results (each result's log leaf and script
arguments), send rounds (each chunk's COMPLETE and the next chunk's BEGIN, one round trip),
confirm (WAIT; nothing at MIN_REPLICAS=0); CPU per job of this process and of the Redis
server. The inline core on the same requests is the yardstick. Celery's
own cost per message is what ``bench/pipeline.py`` reports as the no-op floor.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from benchstore import bench_settings, delete_prefix, query_texts  # noqa: E402

from bench.retrieve_split import Clock  # noqa: E402
from rookhaven import RetrievalRequest, Retriever  # noqa: E402
from rookhaven.core.canonical import canonical_bytes  # noqa: E402
from rookhaven.corpusfile import load_corpus  # noqa: E402
from rookhaven.pipeline import Executor, Pipeline  # noqa: E402
from rookhaven.pipeline.fake import RecordingDispatcher  # noqa: E402
from rookhaven.store import Store  # noqa: E402
from rookhaven.store.rounds import Round  # noqa: E402

Timers = dict[str, float]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--redis", default=os.environ.get("ROOKHAVEN_REDIS_URL",
                                                          "redis://127.0.0.1:6379/0"))
    parser.add_argument("--dataset", type=Path, required=True,
                        help="a BEIR directory (corpus.jsonl, queries.jsonl)")
    parser.add_argument("--jobs", type=int, default=3000)
    parser.add_argument("--batch", type=int, default=100)
    parser.add_argument("--engine", default=None, help="default: ROOKHAVEN_ENGINE's default")
    args = parser.parse_args()

    prefix = f"rh-split-{os.getpid()}"
    settings = bench_settings(args.redis, prefix)
    if args.engine:
        settings = settings.with_overrides(engine=args.engine)
    store = Store.from_settings(settings)
    docs = load_corpus(args.dataset / "corpus.jsonl", max_docs=10**6)
    queries = query_texts(args.dataset)
    reqs = [RetrievalRequest(query=queries[i % len(queries)], recall_budget=10, seed=f"s{i}")
            for i in range(args.jobs)]
    try:
        pipe = Pipeline(store, RecordingDispatcher(), settings)
        pipe.add_corpus(docs, "bench")
        ids = [ref.job_id for ref in pipe.submit_many(reqs, "bench")]

        inline = Retriever(docs, settings.engine)
        began, cpu_began = time.perf_counter(), time.process_time()
        for request in reqs:
            canonical_bytes(inline.result_data(request))
        inline_s, inline_cpu = time.perf_counter() - began, time.process_time() - cpu_began

        executor = Executor(store, settings)
        executor.cache.get(pipe.store.corpora.resolve("bench"), settings.engine, {})
        clock = Clock()  # exclusive times: a claim's own round trip is the claim's
        timers = clock.spent
        jobs, results = store.jobs, store.results
        jobs.start = clock.wrap("claim (parse START)", jobs.start)  # type: ignore[method-assign]
        results.queue_put = clock.wrap(  # type: ignore[method-assign]
            "queue results (leaf, args)", results.queue_put)
        Round.send = clock.wrap("round trips (START, COMPLETE+BEGIN)",  # type: ignore[method-assign]
                                Round.send)
        store.replication.confirm = clock.wrap(  # type: ignore[method-assign]
            "confirm (WAIT)", store.replication.confirm)
        executor.compute = clock.wrap(  # type: ignore[method-assign]
            "compute + encode", executor.compute)
        server_before = _server_cpu(store)
        cpu_began = time.process_time()
        began = time.perf_counter()
        for at in range(0, len(ids), args.batch):
            outcomes = executor.run(ids[at: at + args.batch], "bench")
            assert all(o == "done" for o in outcomes), outcomes[:3]
        total = time.perf_counter() - began
        cpu = time.process_time() - cpu_began
        server = _server_cpu(store) - server_before

        per_job = {name: seconds / len(ids) * 1e6 for name, seconds in timers.items()}
        per_job["other (Python around them)"] = total / len(ids) * 1e6 - sum(per_job.values())
        print(f"{len(ids)} jobs of {args.dataset.name}, batches of {args.batch}, "
              f"engine {settings.engine}")
        print(f"inline core: {inline_s / len(ids) * 1e6:.0f} us per request "
              f"({len(ids) / inline_s:.0f}/s)")
        print(f"executor:    {total / len(ids) * 1e6:.0f} us per job ({len(ids) / total:.0f}/s), "
              f"{total / inline_s:.2f}x the inline time")
        for name, micros in per_job.items():
            print(f"  {name:<28} {micros:7.1f} us  {micros / (total / len(ids) * 1e6):5.1%}")
        print(f"CPU per job: worker {cpu / len(ids) * 1e6:.0f} us, Redis server "
              f"{server / len(ids) * 1e6:.0f} us (its whole CPU: use a Redis of your own); "
              f"inline {inline_cpu / len(ids) * 1e6:.0f} us")
    finally:
        delete_prefix(store, prefix)


def _server_cpu(store: Store) -> float:
    info = store.client.info("cpu")
    return float(info["used_cpu_user"]) + float(info["used_cpu_sys"])


if __name__ == "__main__":
    main()
