"""Throughput and CPU a job of the job pipeline against the inline core, the one-job path
against Celery's own floor, and worker-loss recovery time.

Run by hand (not a test), against a Redis of its own (its CPU is read whole); it starts and
stops its own workers and deletes its keys afterwards:

    redis-server --port 6391 --save "" --appendonly no --daemonize yes
    .venv/bin/python bench/pipeline.py --redis redis://127.0.0.1:6391/0 \
        --dataset ../shared/datasets/npl --jobs 30000

Measured, in the same run and on the same requests:
1. inline: one Retriever (index built once) answering every request in this process, as
   the canonical result and audit bytes (``result_bytes``: the fastest inline path to the
   bytes a worker stores),
   before the bulk run and again right after it (the ratios use both);
2. bulk: the same requests through ``Pipeline.submit_many`` (batch messages) to one
   ``celery -A workers worker -c N`` (N pool processes), until every job is done; in the
   steady state: the worker is started and has run ``--warm`` jobs of the same workload
   (every kernel loaded in every pool process) before the clock starts. The CPU each
   process used a job: the worker's main process, its pool, the Redis server (all its
   clients) and this submitter;
3. single: a share of them as one message per job (batch size 1), and the CPU a job;
4. floors: a no-op task, one message per call (the queue's own cost); and (``--floor``)
   a task that ranks a message of requests and stores their results with one MSET, no
   ledger (the least any job system on this queue does: the batch path's ceiling), in the
   bulk run's batches, warmed the same way, with its CPU a job; and (``--stateless``) a
   prototype of a ledger that keeps no state a job (``bench.noop_app.ledger``, ADR 0065):
   the same jobs made by the pipeline's own maker, one record a message, each job run as the
   executor does, the results stored with their leaves by one transaction a message;
5. MCP: ``--mcp`` requests through a stdio MCP server (``rookhaven mcp``), each
   ``submit_retrieval`` then ``get_job`` until done then ``get_result``: p50 and p99;
6. rerank: ``rookhaven rerank --requests FILE --baseline bench --to-engine E`` of
   ``--rerank`` requests through the workers (2N rankings: the baseline and the target), and
   ``--inline``, against the bare core ranking the same 2N in this process;
7. recovery: SIGKILL the whole worker mid-run, start a new one, and time until every job
   is done (from the new worker being ready).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import orjson  # noqa: E402

from bench.benchstore import print_commands, redis_commands  # noqa: E402
from bench.noop_app import RECORD, TASK_LEDGER, TASK_NOOP, TASK_RANK, ledger_keys  # noqa: E402
from rookhaven import RetrievalRequest, Retriever  # noqa: E402
from rookhaven.config import Settings  # noqa: E402
from rookhaven.corpusfile import load_corpus  # noqa: E402
from rookhaven.pipeline import Pipeline, open_pipeline  # noqa: E402
from rookhaven.pipeline.warmup import warm_up  # noqa: E402
from tests.integration.workerfarm import FAST, WorkerFarm, documents, requests  # noqa: E402
from tests.mcp_support import StdioSession  # noqa: E402


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
    return sum(own_cpu(pid) + cpu_seconds(children(pid)) for pid in pids)


def own_cpu(pid: int) -> float:
    """CPU seconds (user + system) used so far by ``pid`` alone (0 once it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def children(pid: int) -> list[int]:
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


class Meter:
    """CPU seconds of each process that works on a job: the worker's main process, its pool
    (the main process's children), the Redis server and this process."""

    NAMES = ("worker main", "worker pool", "Redis", "submitter")

    def __init__(self, pipe: Pipeline, worker: int) -> None:
        self._pipe, self._worker = pipe, worker

    def read(self) -> tuple[float, ...]:
        return (own_cpu(self._worker), cpu_seconds(children(self._worker)),
                redis_cpu(self._pipe), time.process_time())

    def per_job(self, before: tuple[float, ...], jobs: int) -> dict[str, float]:
        """Microseconds a job each process used since ``before``."""
        return {name: (b - a) / jobs * 1e6
                for name, a, b in zip(self.NAMES, before, self.read(), strict=True)}


def peak_memory(worker: int) -> str:
    """The peak resident size of the worker's main process and of each pool process."""
    def peak(pid: int) -> str:
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    return f"{int(line.split()[1]) / 1024:.0f}"
        except OSError:
            pass
        return "?"
    return (f"peak resident MB: worker main {peak(worker)}, pool "
            f"{' / '.join(peak(child) for child in children(worker))}")


def shown(used: dict[str, float], inline: float) -> str:
    """``used`` (us a job by process) as one line, with the worker's and all processes'
    ratio to the inline core's CPU a request."""
    worker = used["worker main"] + used["worker pool"]
    every = sum(used.values())
    parts = ", ".join(f"{name} {us:.0f}" for name, us in used.items())
    return (f"{parts} us; worker {worker:.0f} us ({worker / inline:.2f}x inline), all "
            f"{every:.0f} us ({every / inline:.2f}x inline {inline:.0f} us)")


def redis_cpu(pipe: Pipeline) -> float:
    info = pipe.store.client.info("cpu")
    return float(info["used_cpu_user"]) + float(info["used_cpu_sys"])


def through_queue(pipe: Pipeline, digest: str, reqs: list[Any], tag: str,
                  engine: str | None = None) -> float:
    started = time.perf_counter()
    target = stored(pipe, digest) + len(reqs)
    pipe.submit_many(reqs, "bench", engine)
    until(lambda: stored(pipe, digest) >= target, 600, f"{tag} jobs", interval=0.05)
    return time.perf_counter() - started


class FloorRun:
    """Requests through the ranking floor (``bench.noop_app.rank``): sent in messages of
    ``batch``, timed until the workers have counted them all."""

    def __init__(self, pipe: Pipeline, counter: str, digest: str, provider: str,
                 params: dict[str, Any], batch: int) -> None:
        self.app = pipe.dispatcher.app  # type: ignore[attr-defined]
        self.client = pipe.store.client
        self.args = (counter, digest, provider, params)
        self.batch = batch

    def run(self, reqs: list[RetrievalRequest]) -> float:
        """Seconds from the first message sent until every request is ranked and stored."""
        started = time.perf_counter()
        target = int(self.client.get(self.args[0]) or 0) + len(reqs)
        with self.app.producer_or_acquire() as producer:
            for at in range(0, len(reqs), self.batch):
                lines = [r.model_dump_json() for r in reqs[at:at + self.batch]]
                self.app.send_task(TASK_RANK, args=[*self.args, lines], producer=producer)
        until(lambda: int(self.client.get(self.args[0]) or 0) >= target, 600, "the floor",
              interval=0.05)
        return time.perf_counter() - started


class StatelessRun:
    """Requests through the stateless ledger's prototype (``bench.noop_app.ledger``): each
    batch's jobs made by the pipeline's maker (keys and recipes, as ``submit_many`` makes
    them), recorded with one script a message, sent as one message of their keys."""

    def __init__(self, pipe: Pipeline, prefix: str, digest: str, batch: int,
                 carried: bool = False) -> None:
        self.app = pipe.dispatcher.app  # type: ignore[attr-defined]
        self.carried = carried  # the message carries the recipes: the worker claims nothing
        self.client = pipe.store.client
        self.prefix, self.digest, self.batch = prefix, digest, batch
        self.counter = f"{prefix}:count"
        self.make = pipe._maker(digest, None, None)[2]
        self.messages = 0

    def run(self, reqs: list[RetrievalRequest]) -> float:
        """Seconds from the first job made until every job's result is stored."""
        started = time.perf_counter()
        target = int(self.client.get(self.counter) or 0) + len(reqs)
        record = self.client.register_script(RECORD)
        with self.app.producer_or_acquire() as producer:
            for at in range(0, len(reqs), self.batch):
                made = [self.make(r) for r in reqs[at:at + self.batch]]
                self.messages += 1
                message = f"{os.getpid()}-{self.messages}"
                names = ledger_keys(self.prefix, message)
                keys = [key for key, _ in made]
                stored = record(keys=[names["record"], names["open"],
                                      *(f"{self.prefix}:r:{key}" for key in keys)],
                                args=[time.time(), b"\n".join(r for _, r in made)])
                fresh = [key for key, done in zip(keys, stored, strict=True) if not done]
                carried = [r.decode() for (key, r), done in zip(made, stored, strict=True)
                           if not done] if self.carried else None
                self.app.send_task(TASK_LEDGER, args=[self.counter, self.prefix, message,
                                                      self.digest, fresh, carried],
                                   producer=producer)
        until(lambda: int(self.client.get(self.counter) or 0) >= target, 600,
              "the stateless ledger", interval=0.05)
        return time.perf_counter() - started


def single_jobs(pipe: Pipeline, digest: str, reqs: list[RetrievalRequest], meter: Meter,
                inline_us: float) -> float:
    """Jobs/s of ``reqs`` submitted one at a time, one message each (batch size 1, as
    ``submit --query`` and MCP ``submit_retrieval`` send them), and their CPU a job."""
    single = Pipeline(pipe.store, pipe.dispatcher, pipe.settings.with_overrides(batch_size=1))
    started = time.perf_counter()
    target = stored(pipe, digest) + len(reqs)
    before = meter.read()
    for request in reqs:
        single.submit(request, "bench")
    until(lambda: stored(pipe, digest) >= target, 600, "single jobs", interval=0.05)
    rate = len(reqs) / (time.perf_counter() - started)
    print(f"single (1/message): {rate:.0f} jobs/s; CPU a job: "
          f"{shown(meter.per_job(before, len(reqs)), inline_us)}", flush=True)
    return rate


def noop_floor(pipe: Pipeline, counter: str, tasks: int) -> float:
    """Tasks/s of Celery's own floor: ``tasks`` no-op tasks, one message each."""
    started = time.perf_counter()
    app = pipe.dispatcher.app  # type: ignore[attr-defined]
    with app.producer_or_acquire() as producer:
        for _ in range(tasks):
            app.send_task(TASK_NOOP, args=[counter], producer=producer)
    until(lambda: int(pipe.store.client.get(counter) or 0) >= tasks, 600, "no-ops",
          interval=0.05)
    rate = tasks / (time.perf_counter() - started)
    print(f"no-op floor (1/message): {rate:.0f} tasks/s", flush=True)
    return rate


def mcp_latency(env: dict[str, str], reqs: list[RetrievalRequest]) -> None:
    """p50 and p99 of ``submit_retrieval`` -> ``get_result`` through a stdio MCP server,
    polling ``get_job`` every millisecond or two, one request at a time."""
    session = StdioSession(env, timeout=60)
    try:
        session.initialize()

        def call(tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
            result = session.request("tools/call", {"name": tool, "arguments": arguments})
            assert result["result"].get("isError") is not True, result["result"]["content"]
            answer: dict[str, Any] = result["result"]["structuredContent"]
            return answer

        took = []
        for request in reqs:
            began = time.perf_counter()
            job = call("submit_retrieval", {"query": request.query, "corpus": "bench",
                                            "recallBudget": request.recall_budget,
                                            "seed": request.seed})
            while call("get_job", {"jobId": job["job_id"]})["state"] != "done":
                time.sleep(0.001)
            call("get_result", {"resultKey": job["result_key"]})
            took.append(time.perf_counter() - began)
        took.sort()
        print(f"MCP submit_retrieval -> get_result ({len(took)} calls over stdio): p50 "
              f"{took[len(took) // 2] * 1e3:.1f} ms, p99 "
              f"{took[min(len(took) - 1, len(took) * 99 // 100)] * 1e3:.1f} ms", flush=True)
    finally:
        session.close()


def rerank(env: dict[str, str], pipe: Pipeline, digest: str, docs: Any,
           reqs: list[RetrievalRequest], target: str, logs: Path,
           profile: Path | None = None, chunk: int | None = None) -> None:
    """A re-ranking run of ``reqs`` from the pipeline's engine to ``target`` through the
    workers and with ``--inline``, against the core ranking both sides in this process;
    with ``profile``, the run through the workers under py-spy (its times then include
    the sampler's). Every process has loaded both engines' kernels before the clock."""
    engine = pipe.settings.engine
    warm = [r.model_copy(update={"seed": r.seed + "-warm"}) for r in reqs[:200]]
    for name in (engine, target):
        _inline(Retriever(docs, name), warm)
    through_queue(pipe, digest, warm, "rerank warm-up", target)
    began = time.perf_counter()
    for name in (engine, target):
        retriever = Retriever(docs, name)
        for request in reqs:
            retriever.result_bytes(request)
    core = time.perf_counter() - began
    print(f"rerank of {len(reqs)} requests ({engine} -> {target}): the bare core ranks the "
          f"{2 * len(reqs)} in {core:.2f} s", flush=True)
    file = logs / "rerank.jsonl"
    file.write_bytes(b"".join(orjson.dumps(r.model_dump(by_alias=True)) + b"\n"
                              for r in reqs))
    for mode in ([], ["--inline"]):
        command = [sys.executable, "-m", "rookhaven.cli.main", "rerank", "--requests",
                   str(file), "--baseline", "bench", "--to-engine", target, *mode,
                   "--out", str(logs / f"report{len(mode)}.jsonl"),
                   *(["--chunk", str(chunk)] if chunk else [])]
        if profile is not None and not mode:
            spy = shutil.which("py-spy", path=f"{Path(sys.executable).parent}:{os.defpath}")
            if spy is None:
                raise SystemExit("--profile-rerank needs py-spy: pip install py-spy")
            command = [spy, "record", "--rate", "250", "--format", "raw", "--output",
                       str(profile), "--", *command]
        began, used = time.perf_counter(), _children_cpu()
        done = subprocess.run(command, env={**env, "ROOKHAVEN_KERNEL_WARMUP": "none"},
                              capture_output=True, timeout=1800)
        took, used = time.perf_counter() - began, _children_cpu() - used
        if done.returncode != 0:
            raise SystemExit(f"rerank failed: {done.stderr.decode()[-2000:]}")
        print(f"  {' '.join(mode) or 'through the workers'}: {took:.2f} s, "
              f"{core / took:.2f}x the bare core; the command's own CPU {used:.2f} s",
              flush=True)
        # The next mode's jobs exist now: a fresh set of seeds for it.
        reqs = [r.model_copy(update={"seed": r.seed + "-again"}) for r in reqs]
        file.write_bytes(b"".join(orjson.dumps(r.model_dump(by_alias=True)) + b"\n"
                                  for r in reqs))


def _inline(retriever: Retriever, reqs: list[RetrievalRequest]) -> float:
    """Seconds the inline core takes for ``reqs``: the fastest inline path to the bytes a
    worker stores."""
    began = time.perf_counter()
    for request in reqs:
        retriever.result_bytes(request)
    return time.perf_counter() - began


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--redis", default=os.environ.get("ROOKHAVEN_REDIS_URL",
                                                          "redis://127.0.0.1:6379/0"))
    parser.add_argument("--jobs", type=int, default=30000)
    parser.add_argument("--warm", type=int, default=2000,
                        help="jobs run through the worker before the clock starts")
    parser.add_argument("--single", type=int, default=1000,
                        help="jobs sent one per message (0: none)")
    parser.add_argument("--noop", type=int, default=2000,
                        help="no-op tasks for Celery's floor (0: none)")
    parser.add_argument("--floor", type=int, default=None,
                        help="jobs through the ranking floor (default: --jobs; 0: none)")
    parser.add_argument("--stateless", type=int, default=0,
                        help="jobs through the stateless ledger's prototype (0: none)")
    parser.add_argument("--mcp", type=int, default=200,
                        help="submit_retrieval -> get_result calls through a stdio MCP server")
    parser.add_argument("--docs", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=2, help="worker pool processes")
    parser.add_argument("--batch", type=int, default=Settings().batch_size,
                        help="jobs a message (default: ROOKHAVEN_BATCH_SIZE's)")
    parser.add_argument("--dataset", type=Path,
                        help="a BEIR directory (corpus.jsonl, queries.jsonl) instead of the "
                             "synthetic corpus, e.g. /work/shared/datasets/cranfield")
    parser.add_argument("--queries", default="queries.jsonl",
                        help="the query file in --dataset (syn100k has q3.jsonl and q8.jsonl)")
    parser.add_argument("--fast", action="store_true",
                        help="the integration tests' short heartbeat and sweep intervals")
    parser.add_argument("--no-recovery", action="store_true", help="skip the kill and recovery")
    parser.add_argument("--rerank", type=int, default=0,
                        help="requests re-ranked with `rookhaven rerank` (0: none)")
    parser.add_argument("--rerank-chunk", type=int, default=None,
                        help="the re-ranking run's queries a chunk (default: the command's)")
    parser.add_argument("--rerank-engine", default="bm25@4",
                        help="the re-ranking run's target engine")
    parser.add_argument("--profile-rerank", type=Path, default=None,
                        help="record the re-ranking command through the workers with py-spy "
                             "(collapsed stacks, 250 samples a second) into this file")
    parser.add_argument("--commands", action="store_true",
                        help="print the bulk run's Redis commands: calls and us a job")
    args = parser.parse_args()

    prefix = f"rh-bench-{os.getpid()}"
    logs = Path(f"/tmp/{prefix}")
    logs.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("ROOKHAVEN_")}
    # Production defaults (heartbeat 10 s, sweep every 10 s), unless --fast.
    # The kernels load from numba's cache at each pool process's first use (filled here
    # first), so the warm-up jobs load every kernel the workload uses before the clock.
    env.update(FAST if args.fast else {"ROOKHAVEN_LOG_LEVEL": "warning"},
               ROOKHAVEN_REDIS_URL=args.redis, ROOKHAVEN_KEY_PREFIX=prefix,
               ROOKHAVEN_BATCH_SIZE=str(args.batch), ROOKHAVEN_KERNEL_WARMUP="none")
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
        # Untimed first: this process's kernels compile, or load from numba's cache, at
        # their first use (seconds), which would be charged to the inline core.
        _inline(inline, reqs[:200])
        inline_s = _inline(inline, reqs)
        print(f"inline: index {built - started:.2f} s, {args.jobs / inline_s:.0f} requests/s",
              flush=True)

        warm_up([pipe.settings.engine])  # numba's cache filled before any worker starts
        worker = workers.start("bench", args.concurrency, app="bench.noop_app")
        meter = Meter(pipe, worker.pid)
        # Each pool process indexes the corpus and loads its kernels before the clock.
        through_queue(pipe, digest, make(args.warm, tag="warm-"), "warm-up")
        before, commands = meter.read(), redis_commands(pipe.store.client)
        rows["bulk"] = args.jobs / through_queue(pipe, digest, reqs, "bulk")
        used = meter.per_job(before, args.jobs)
        # Inline again, right after: the machine's speed drifts, and the bulk run is judged
        # against the inline core on both sides of it.
        after_s = _inline(inline, reqs)
        rows["inline"] = 2 * args.jobs / (inline_s + after_s)
        inline_us = 1e6 / rows["inline"]
        print(f"inline again: {args.jobs / after_s:.0f} requests/s; both: "
              f"{rows['inline']:.0f}/s", flush=True)
        print(f"bulk ({args.batch}/message): {rows['bulk']:.0f} jobs/s, "
              f"{rows['bulk'] / rows['inline']:.2f}x inline; CPU a job: "
              f"{shown(used, inline_us)}", flush=True)
        print(f"  {peak_memory(worker.pid)}", flush=True)
        if args.commands:
            print_commands(commands, redis_commands(pipe.store.client), args.jobs)
        floor = args.jobs if args.floor is None else args.floor
        if floor:
            spec = pipe.spec(reqs[0], digest)
            counter = f"{prefix}:bench:rank"
            ranked = FloorRun(pipe, counter, digest, spec.provider, spec.params, args.batch)
            ranked.run(make(args.warm, tag="floor-warm-"))  # each pool process indexes
            before = meter.read()
            rows["floor"] = floor / ranked.run(make(floor, tag="floor-"))
            used = meter.per_job(before, floor)
            # Judged against the inline runs on both sides of it, as the bulk run is.
            around = 2 * args.jobs / (after_s + _inline(inline, reqs))
            print(f"ranking floor ({args.batch}/message, no ledger): {rows['floor']:.0f} "
                  f"jobs/s, {rows['floor'] / around:.2f}x inline ({around:.0f}/s on both "
                  f"sides); bulk/floor "
                  f"{rows['bulk'] / rows['floor']:.2f}; CPU a job: "
                  f"{shown(used, 1e6 / around)}", flush=True)

        if args.stateless:
            run = StatelessRun(pipe, f"{prefix}:sl", digest, args.batch)
            run.run(make(args.warm, tag="stateless-warm-"))  # each pool process indexes
            before = meter.read()
            rows["stateless"] = args.stateless / run.run(make(args.stateless,
                                                             tag="stateless-"))
            used = meter.per_job(before, args.stateless)
            around = 2 * args.jobs / (after_s + _inline(inline, reqs))
            print(f"stateless ledger ({args.batch}/message, prototype): "
                  f"{rows['stateless']:.0f} jobs/s, {rows['stateless'] / around:.2f}x inline "
                  f"({around:.0f}/s on both sides)"
                  + (f"; stateless/floor {rows['stateless'] / rows['floor']:.2f}"
                     if "floor" in rows else "")
                  + f"; CPU a job: {shown(used, 1e6 / around)}", flush=True)
            for row, carried, how in (
                    ("stateless-single", False, "prototype"),
                    ("carried-single", True, "the recipe in the message, no claim")):
                if not args.single:
                    break
                single = StatelessRun(pipe, f"{prefix}:{row}", digest, 1, carried=carried)
                single.run(make(20, tag=f"{row}-warm-"))
                before = meter.read()
                rows[row] = args.single / single.run(make(args.single, tag=f"{row}-"))
                print(f"stateless ledger (1/message, {how}): {rows[row]:.0f} jobs/s; CPU a "
                      f"job: {shown(meter.per_job(before, args.single), 1e6 / around)}",
                      flush=True)

        if args.single:
            rows["single"] = single_jobs(pipe, digest, make(args.single, tag="single-"),
                                         meter, inline_us)
        if args.noop:
            rows["noop"] = noop_floor(pipe, f"{prefix}:bench:noop", args.noop)
            if "single" in rows:
                print(f"single/floor {rows['single'] / rows['noop']:.2f}", flush=True)

        if args.mcp:
            mcp_latency(env, make(args.mcp, tag="mcp-"))
        if args.rerank:
            rerank(env, pipe, digest, docs, make(args.rerank, tag="rerank-"),
                   args.rerank_engine, logs, args.profile_rerank, args.rerank_chunk)
        if args.no_recovery:
            return
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
        print("ratios: " + "; ".join(
            f"{name} {rows[a] / rows[b]:.2f}" for name, a, b in (
                ("bulk/inline", "bulk", "inline"), ("single/inline", "single", "inline"),
                ("bulk/noop-floor", "bulk", "noop"), ("single/noop-floor", "single", "noop"),
                ("stateless/inline", "stateless", "inline"),
                ("stateless-single/noop-floor", "stateless-single", "noop"),
                ("carried-single/noop-floor", "carried-single", "noop"))
            if a in rows and b in rows))
    finally:
        workers.stop_all()
        keys = list(pipe.store.client.scan_iter(match=f"{prefix}*", count=1000))
        for at in range(0, len(keys), 1000):
            pipe.store.client.delete(*keys[at: at + 1000])


if __name__ == "__main__":
    main()
