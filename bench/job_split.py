"""Where a job's time goes on a worker: each step of ``Executor.run``, timed in one process.

Run by hand (not a test), against a Redis you name; it writes under its own key prefix
and deletes it afterwards:

    .venv/bin/python bench/job_split.py --redis redis://127.0.0.1:6379/0 \
        --dataset ../shared/datasets/npl --jobs 3000 --batch 100

It records ``--jobs`` jobs (as ``submit_many`` would, without sending messages), then runs
them in batches through the worker's own ``Executor`` with its store methods wrapped in
timers: claim (START, one pipeline per batch), begin (BEGIN, per job), compute (the
engine: ``result_data``), encode (canonical bytes), put (COMPLETE, per job), confirm (WAIT;
nothing at MIN_REPLICAS=0). The inline core on the same requests is the yardstick. Celery's
own cost per message is what ``bench/pipeline.py`` reports as the no-op floor.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import orjson  # noqa: E402

from rookhaven import RetrievalRequest, Retriever  # noqa: E402
from rookhaven.config import Settings  # noqa: E402
from rookhaven.core.canonical import canonical_bytes  # noqa: E402
from rookhaven.corpusfile import load_corpus  # noqa: E402
from rookhaven.pipeline import Executor, Pipeline  # noqa: E402
from rookhaven.pipeline.fake import RecordingDispatcher  # noqa: E402
from rookhaven.store import Store  # noqa: E402

Timers = dict[str, float]


def timed(timers: Timers, name: str, function: Callable[..., Any]) -> Callable[..., Any]:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        began = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            timers[name] += time.perf_counter() - began
    return wrapper


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
    settings = Settings.from_mapping({"ROOKHAVEN_REDIS_URL": args.redis,
                                      "ROOKHAVEN_KEY_PREFIX": prefix,
                                      "ROOKHAVEN_LOG_LEVEL": "warning"})
    if args.engine:
        settings = settings.with_overrides(engine=args.engine)
    store = Store.from_settings(settings)
    docs = load_corpus(args.dataset / "corpus.jsonl", max_docs=10**6)
    lines = (args.dataset / "queries.jsonl").read_bytes().splitlines()
    queries = [orjson.loads(line)["text"] for line in lines if line.strip()]
    reqs = [RetrievalRequest(query=queries[i % len(queries)], recall_budget=10, seed=f"s{i}")
            for i in range(args.jobs)]
    try:
        pipe = Pipeline(store, RecordingDispatcher(), settings)
        pipe.add_corpus(docs, "bench")
        ids = [ref.job_id for ref in pipe.submit_many(reqs, "bench")]

        inline = Retriever(docs, settings.engine)
        began = time.perf_counter()
        for request in reqs:
            canonical_bytes(inline.result_data(request))
        inline_s = time.perf_counter() - began

        executor = Executor(store, settings)
        executor.cache.get(pipe.store.corpora.resolve("bench"), settings.engine, {})
        timers: Timers = defaultdict(float)
        jobs, results = store.jobs, store.results
        jobs.start = timed(timers, "claim (START)", jobs.start)  # type: ignore[method-assign]
        jobs.begin = timed(timers, "begin (BEGIN)", jobs.begin)  # type: ignore[method-assign]
        results.put = timed(timers, "put (COMPLETE)", results.put)  # type: ignore[method-assign]
        store.replication.confirm = timed(  # type: ignore[method-assign]
            timers, "confirm (WAIT)", store.replication.confirm)
        real_compute = executor.compute
        executor.compute = timed(  # type: ignore[method-assign]
            timers, "compute + encode", real_compute)
        began = time.perf_counter()
        for at in range(0, len(ids), args.batch):
            outcomes = executor.run(ids[at: at + args.batch], "bench")
            assert all(o == "done" for o in outcomes), outcomes[:3]
        total = time.perf_counter() - began

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
    finally:
        keys = list(store.client.scan_iter(match=f"{prefix}*", count=1000))
        for at in range(0, len(keys), 1000):
            store.client.delete(*keys[at: at + 1000])


if __name__ == "__main__":
    main()
