"""Throughput of the job pipeline versus the inline core, and worker-loss recovery time.

Run by hand (not a test), against a Redis you name; it starts and stops its own workers
and deletes its keys afterwards:

    .venv/bin/python bench/pipeline.py --redis redis://127.0.0.1:6379/0 --jobs 5000

Measured, in the same run and on the same requests:
1. inline: one Retriever (index built once) answering every request in this process, as
   the canonical result bytes (``result_data``: the fastest inline path to those bytes);
2. bulk: the same requests through ``Pipeline.submit_many`` (batch messages) to one
   ``celery -A workers worker -c N`` (N pool processes), until every job is done;
3. single: a share of them as one message per job (batch size 1);
4. floor: a no-op task, one message per call (the queue's own cost);
5. recovery: SIGKILL the whole worker mid-run, start a new one, and time until every job
   is done (from the new worker being ready).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import orjson  # noqa: E402

from bench.noop_app import TASK_NOOP  # noqa: E402
from rookhaven import RetrievalRequest, Retriever, canonical_bytes  # noqa: E402
from rookhaven.config import Settings  # noqa: E402
from rookhaven.corpusfile import load_corpus  # noqa: E402
from rookhaven.pipeline import Pipeline, open_pipeline  # noqa: E402
from tests.integration.workerfarm import FAST, WorkerFarm, documents, requests  # noqa: E402


def until(condition: Any, timeout: float, what: str, interval: float = 0.02) -> Any:
    deadline = time.monotonic() + timeout
    while not (value := condition()):
        if time.monotonic() > deadline:
            raise SystemExit(f"timed out waiting for {what}")
        time.sleep(interval)
    return value


def done_count(pipe: Pipeline, ids: list[str]) -> int:
    """How many of ``ids`` are done (reads every record: use for small sets only)."""
    return sum(1 for r in pipe.store.jobs.get_many(ids) if r and r.state == "done")


def stored(pipe: Pipeline, digest: str) -> int:
    """Results stored over the bench corpus: one ZCARD, so polling it costs the workers
    nothing (polling thousands of job states would compete with them for the 2 cores)."""
    return pipe.store.audits.count(corpus=digest)


def cpu_seconds(pids: list[int]) -> float:
    """CPU seconds (user + system) used so far by ``pids`` and their children's trees."""
    total = 0.0
    tick = os.sysconf("SC_CLK_TCK")
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / tick
        total += cpu_seconds([int(c) for c in children])
    return total


def redis_cpu(pipe: Pipeline) -> float:
    info = pipe.store.client.info("cpu")
    return float(info["used_cpu_user"]) + float(info["used_cpu_sys"])


def through_queue(pipe: Pipeline, digest: str, reqs: list[Any], tag: str) -> float:
    started = time.perf_counter()
    target = stored(pipe, digest) + len(reqs)
    pipe.submit_many(reqs, "bench")
    until(lambda: stored(pipe, digest) >= target, 600, f"{tag} jobs", interval=0.05)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--redis", default=os.environ.get("ROOKHAVEN_REDIS_URL",
                                                          "redis://127.0.0.1:6379/0"))
    parser.add_argument("--jobs", type=int, default=5000)
    parser.add_argument("--single", type=int, default=1000, help="jobs sent one per message")
    parser.add_argument("--noop", type=int, default=2000, help="no-op tasks for the floor")
    parser.add_argument("--docs", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=2, help="worker pool processes")
    parser.add_argument("--batch", type=int, default=100)
    parser.add_argument("--dataset", type=Path,
                        help="a BEIR directory (corpus.jsonl, queries.jsonl) instead of the "
                             "synthetic corpus, e.g. /work/shared/datasets/cranfield")
    parser.add_argument("--queries", default="queries.jsonl",
                        help="the query file in --dataset (syn100k has q3.jsonl and q8.jsonl)")
    parser.add_argument("--fast", action="store_true",
                        help="the integration tests' short heartbeat and sweep intervals")
    args = parser.parse_args()

    prefix = f"rh-bench-{os.getpid()}"
    logs = Path(f"/tmp/{prefix}")
    logs.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("ROOKHAVEN_")}
    # Production defaults (heartbeat 10 s, sweep every 10 s), unless --fast.
    env.update(FAST if args.fast else {"ROOKHAVEN_LOG_LEVEL": "warning"},
               ROOKHAVEN_REDIS_URL=args.redis, ROOKHAVEN_KEY_PREFIX=prefix,
               ROOKHAVEN_BATCH_SIZE=str(args.batch))
    pipe = open_pipeline(Settings.from_mapping(env))
    if args.dataset:
        docs = load_corpus(args.dataset / "corpus.jsonl", max_docs=10**6)
        lines = (args.dataset / args.queries).read_bytes().splitlines()
        queries = [orjson.loads(line)["text"] for line in lines if line.strip()]

        def make(n: int, tag: str = "") -> list[RetrievalRequest]:
            # Each judged query, again and again under new seeds: distinct jobs, real text.
            return [RetrievalRequest(query=queries[i % len(queries)], recall_budget=10,
                                     seed=f"{tag}{i}") for i in range(n)]
    else:
        docs = documents(args.docs)
        make = requests
    digest = pipe.add_corpus(docs, "bench").digest
    workers = WorkerFarm(env, logs)
    rows: dict[str, float] = {}
    try:
        reqs = make(args.jobs, tag="bulk-")
        started = time.perf_counter()
        inline = Retriever(docs, pipe.settings.engine)
        built = time.perf_counter()
        for request in reqs:  # the fastest inline path to the bytes a worker stores
            canonical_bytes(inline.result_data(request))
        rows["inline"] = args.jobs / (time.perf_counter() - built)
        print(f"inline: index {built - started:.2f} s, {rows['inline']:.0f} requests/s",
              flush=True)

        worker = workers.start("bench", args.concurrency, app="bench.noop_app")
        warm = make(4 * args.concurrency, tag="warm-")
        through_queue(pipe, digest, warm, "warm-up")  # each pool process builds its index once
        before = (cpu_seconds([worker.pid]), redis_cpu(pipe), time.process_time())
        rows["bulk"] = args.jobs / through_queue(pipe, digest, reqs, "bulk")
        used = [(b - a) / args.jobs * 1e6 for a, b in zip(before, (
            cpu_seconds([worker.pid]), redis_cpu(pipe), time.process_time()), strict=True)]
        print(f"bulk ({args.batch}/message): {rows['bulk']:.0f} jobs/s; CPU per job: workers "
              f"{used[0]:.0f} us, Redis {used[1]:.0f} us (all its clients), this submitter "
              f"{used[2]:.0f} us; inline {1e6 / rows['inline']:.0f} us", flush=True)

        single = Pipeline(pipe.store, pipe.dispatcher,
                          pipe.settings.with_overrides(batch_size=1))
        singles = make(args.single, tag="single-")
        started = time.perf_counter()
        target = stored(pipe, digest) + len(singles)
        for request in singles:
            single.submit(request, "bench")
        until(lambda: stored(pipe, digest) >= target, 600, "single jobs", interval=0.05)
        rows["single"] = args.single / (time.perf_counter() - started)
        print(f"single (1/message): {rows['single']:.0f} jobs/s", flush=True)

        counter = f"{prefix}:bench:noop"
        started = time.perf_counter()
        app = pipe.dispatcher.app  # type: ignore[attr-defined]
        with app.producer_or_acquire() as producer:
            for _ in range(args.noop):
                app.send_task(TASK_NOOP, args=[counter], producer=producer)
        until(lambda: int(pipe.store.client.get(counter) or 0) >= args.noop, 600, "no-ops",
              interval=0.05)
        rows["noop"] = args.noop / (time.perf_counter() - started)
        print(f"no-op floor (1/message): {rows['noop']:.0f} tasks/s", flush=True)

        kill_reqs = make(args.jobs, tag="kill-")
        before = stored(pipe, digest)
        ids = [r.job_id for r in pipe.submit_many(kill_reqs, "bench")]
        until(lambda: stored(pipe, digest) - before >= len(ids) // 10, 600, "some jobs before kill")
        killed_at = time.perf_counter()
        workers.kill(worker)
        records = pipe.store.jobs.get_many(ids)
        at_kill = sum(1 for r in records if r is not None and r.state == "done")
        orphans = [r.id for r in records if r is not None and r.state == "running"]
        workers.start("rescuer", args.concurrency, beat=True)
        ready = time.perf_counter()
        until(lambda: done_count(pipe, orphans) == len(orphans), 600, "the killed jobs",
              interval=0.05)
        orphans_done = time.perf_counter()
        until(lambda: stored(pipe, digest) - before >= len(ids), 600, "jobs after the kill",
              interval=0.05)
        finished = time.perf_counter()
        print(f"recovery: killed with {at_kill}/{len(ids)} done and {len(orphans)} running; "
              f"new worker ready {ready - killed_at:.1f} s after the kill; the killed "
              f"worker's jobs done {orphans_done - ready:.1f} s after it was ready; "
              f"everything done {finished - ready:.1f} s after it was ready")
        print(f"ratios: bulk/inline {rows['bulk'] / rows['inline']:.2f}; "
              f"single/inline {rows['single'] / rows['inline']:.2f}; "
              f"bulk/noop-floor {rows['bulk'] / rows['noop']:.2f}; "
              f"single/noop-floor {rows['single'] / rows['noop']:.2f}")
    finally:
        workers.stop_all()
        keys = list(pipe.store.client.scan_iter(match=f"{prefix}*", count=1000))
        for at in range(0, len(keys), 1000):
            pipe.store.client.delete(*keys[at: at + 1000])


if __name__ == "__main__":
    main()
