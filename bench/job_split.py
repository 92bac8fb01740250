"""Where a job's time goes on a worker: each step of ``Executor.run``, timed in one process.

Run by hand (not a test), against a Redis you name; it writes under its own key prefix
and deletes it afterwards:

    .venv/bin/python bench/job_split.py --redis redis://127.0.0.1:6379/0 \
        --dataset ../shared/datasets/npl --jobs 3000 --batch 100

It records ``--jobs`` jobs (as ``submit_many`` would, without sending messages), then runs
them in batches through the worker's own ``Executor`` with its store methods wrapped in
timers: claim (START, one round trip per batch), compute and encode (the engine's
``result_bytes`` and the key check), queue results (each result's log leaf and script
arguments), send rounds (each chunk's COMPLETE and the next chunk's BEGIN, one round trip),
confirm (WAIT; nothing at MIN_REPLICAS=0); CPU per job of this process and of the Redis
server. The inline core on the same requests is the yardstick. Celery's
own cost per message is what ``bench/pipeline.py`` reports as the no-op floor.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from benchstore import (  # noqa: E402
    bench_settings,
    delete_prefix,
    print_commands,
    query_texts,
    redis_commands,
)

from bench.retrieve_split import Clock  # noqa: E402
from rookhaven import RetrievalRequest, Retriever  # noqa: E402
from rookhaven.config import Settings  # noqa: E402
from rookhaven.corpusfile import load_corpus  # noqa: E402
from rookhaven.pipeline import Executor, Pipeline  # noqa: E402
from rookhaven.pipeline.fake import RecordingDispatcher  # noqa: E402
from rookhaven.store import Store  # noqa: E402
from rookhaven.store import results as results_module  # noqa: E402
from rookhaven.store.rounds import Round  # noqa: E402

Timers = dict[str, float]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--redis", default=os.environ.get("ROOKHAVEN_REDIS_URL",
                                                          "redis://127.0.0.1:6379/0"))
    parser.add_argument("--dataset", type=Path, required=True,
                        help="a BEIR directory (corpus.jsonl, queries.jsonl)")
    parser.add_argument("--queries", default="queries.jsonl",
                        help="the query file in --dataset (syn100k has q3.jsonl and q8.jsonl)")
    parser.add_argument("--jobs", type=int, default=3000)
    parser.add_argument("--batch", type=int, default=Settings().batch_size,
                        help="jobs a message (default: ROOKHAVEN_BATCH_SIZE's)")
    parser.add_argument("--engine", default=None, help="default: ROOKHAVEN_ENGINE's default")
    args = parser.parse_args()

    prefix = f"rh-split-{os.getpid()}"
    settings = bench_settings(args.redis, prefix)
    if args.engine:
        settings = settings.with_overrides(engine=args.engine)
    store = Store.from_settings(settings)
    docs = load_corpus(args.dataset / "corpus.jsonl", max_docs=10**6)
    queries = query_texts(args.dataset, args.queries)
    reqs = [RetrievalRequest(query=queries[i % len(queries)], recall_budget=10, seed=f"s{i}")
            for i in range(args.jobs)]
    try:
        pipe = Pipeline(store, RecordingDispatcher(), settings)
        pipe.add_corpus(docs, "bench")
        ids = [ref.job_id for ref in pipe.submit_many(reqs, "bench")]

        inline = Retriever(docs, settings.engine)
        for request in reqs[:args.batch]:  # every kernel the requests use loaded
            inline.result_bytes(request)
        executor = Executor(store, settings)
        executor.cache.get(pipe.store.corpora.resolve("bench"), settings.engine, {})
        # Exclusive times, each stage's own (a claim's round trip is the round trips'), on
        # the wall and in this thread's CPU: a round trip's wall time holds the server's work.
        wall, cpu_clock = Clock(), Clock(time.thread_time)

        def wrap(stage: str, function: Any) -> Any:
            return wall.wrap(stage, cpu_clock.wrap(stage, function))

        jobs, results = store.jobs, store.results
        jobs.start = wrap("claim (decode START)", jobs.start)  # type: ignore[method-assign]
        results.queue_put = wrap(  # type: ignore[method-assign]
            "queue results (args)", results.queue_put)
        results_module.leaf_for = wrap("log leaves", results_module.leaf_for)
        if hasattr(results_module, "LeafFrame"):  # a chunk's leaves joined from its frame
            results_module.LeafFrame.encode = wrap(  # type: ignore[method-assign]
                "log leaves", results_module.LeafFrame.encode)
        Round.send = wrap("round trips", Round.send)  # type: ignore[method-assign]
        store.replication.confirm = wrap(  # type: ignore[method-assign]
            "confirm (WAIT)", store.replication.confirm)
        executor._compute = wrap(  # type: ignore[method-assign]
            "compute + encode", executor._compute)
        executor._logged = wrap("log lines", executor._logged)  # type: ignore[method-assign]
        # As a worker's pool process: what was made before its first job is frozen, never
        # walked by the collector (workers.lifecycle freezes it before the fork).
        gc.collect()
        gc.freeze()
        server_before, commands_before = _server_cpu(store), redis_commands(store.client)
        # Each batch ranked inline, then run by the executor: the pair sees the same
        # machine, however its speed drifts over the run.
        total = cpu = inline_s = inline_cpu = 0.0
        for at in range(0, len(ids), args.batch):
            began, cpu_began = time.perf_counter(), time.process_time()
            for request in reqs[at: at + args.batch]:
                inline.result_bytes(request)
            inline_s += time.perf_counter() - began
            inline_cpu += time.process_time() - cpu_began
            began, cpu_began = time.perf_counter(), time.process_time()
            outcomes = executor.run(ids[at: at + args.batch], "bench")
            total += time.perf_counter() - began
            cpu += time.process_time() - cpu_began
            assert all(o == "done" for o in outcomes), outcomes[:3]
        server = _server_cpu(store) - server_before
        commands = redis_commands(store.client)

        n = len(ids)
        print(f"{n} jobs of {args.dataset.name}, batches of {args.batch}, "
              f"engine {settings.engine}")
        print(f"inline core: {inline_s / n * 1e6:.0f} us per request ({n / inline_s:.0f}/s), "
              f"CPU {inline_cpu / n * 1e6:.0f} us")
        print(f"executor:    {total / n * 1e6:.0f} us per job ({n / total:.0f}/s), "
              f"{total / inline_s:.2f}x the inline time; CPU {cpu / n * 1e6:.0f} us, "
              f"{cpu / inline_cpu:.2f}x the inline CPU")
        print(f"  {'stage (us a job)':<28} {'wall':>7} {'CPU':>7}")
        for name in wall.spent:
            print(f"  {name:<28} {wall.spent[name] / n * 1e6:7.1f} "
                  f"{cpu_clock.spent[name] / n * 1e6:7.1f}")
        print(f"  {'other (Python around them)':<28} "
              f"{(total - sum(wall.spent.values())) / n * 1e6:7.1f} "
              f"{(cpu - sum(cpu_clock.spent.values())) / n * 1e6:7.1f}")
        print(f"Redis server CPU: {server / n * 1e6:.0f} us a job (its whole CPU: use a Redis "
              "of your own); by command (calls and us a job; a script's own commands are "
              "counted in its evalsha too):")
        print_commands(commands_before, commands, n)
    finally:
        delete_prefix(store, prefix)


def _server_cpu(store: Store) -> float:
    info = store.client.info("cpu")
    return float(info["used_cpu_user"]) + float(info["used_cpu_sys"])


if __name__ == "__main__":
    main()
