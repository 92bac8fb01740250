"""The cost of ROOKHAVEN_REDIS_MIN_REPLICAS=1 on bulk throughput, and Sentinel failover time.

Run by hand (not a test); it starts its own primary, replica and three Sentinels (as the
integration test does, tests/integration/sentinels.py) and its own workers, all on the
``sentinel://`` URL:

    .venv/bin/python bench/replication.py --jobs 5000 --rounds 3 [--batch 1]

1. bulk: the same number of new jobs through ``Pipeline.submit_many`` to two worker
   processes, alternating MIN_REPLICAS=0 and =1 over ``--rounds`` (workers restarted with
   each setting, the first of each round alternating); jobs/s of each and their ratio;
2. failover (MIN_REPLICAS=1): the primary SIGKILLed with a tenth of the jobs done; the
   time until the Sentinels name the new primary, until the lost host is back as a
   replica (restarted at once: with one replica, nothing can be confirmed until then),
   and until every job is done.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.pipeline import stored, until  # noqa: E402
from rookhaven.pipeline import Pipeline  # noqa: E402
from tests.integration.sentinels import SentinelTopology  # noqa: E402
from tests.integration.workerfarm import (  # noqa: E402
    WorkerFarm,
    documents,
    environment,
    pipeline,
    requests,
)


def bulk(pipe: Pipeline, digest: str, workers: WorkerFarm, jobs: int, tag: str) -> float:
    """jobs/s for ``jobs`` new jobs through two fresh worker processes."""
    procs = [workers.start(f"{tag}-{i}", concurrency=1) for i in range(2)]
    warm = requests(8, tag=f"warm-{tag}-")
    target = stored(pipe, digest) + len(warm)
    pipe.submit_many(warm, "bench")  # each process builds its index once, outside the timing
    until(lambda: stored(pipe, digest) >= target, 300, "warm-up")
    reqs = requests(jobs, tag=f"{tag}-")
    started = time.perf_counter()
    target = stored(pipe, digest) + jobs
    pipe.submit_many(reqs, "bench")
    until(lambda: stored(pipe, digest) >= target, 600, f"{tag} jobs", interval=0.05)
    rate = jobs / (time.perf_counter() - started)
    for proc in procs:
        workers.kill(proc)
    return rate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--docs", type=int, default=2000)
    parser.add_argument("--batch", type=int, default=100,
                        help="jobs per message in the bulk rounds (one WAIT per message)")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="rh-replication-") as tmp:
        nodes = SentinelTopology(Path(tmp) / "redis")
        nodes.start()
        logs = Path(tmp) / "logs"
        logs.mkdir()
        try:
            base = environment(nodes.url, f"rh-bench-{os.getpid()}",
                               ROOKHAVEN_REDIS_REPLICA_TIMEOUT="1",
                               ROOKHAVEN_BATCH_SIZE=str(args.batch))
            docs = documents(args.docs)
            digest = pipeline(base).add_corpus(docs, "bench").digest
            ratios = []
            for round_ in range(args.rounds):
                rates = {}
                # Alternate which setting goes first, so warming and drift favour neither.
                for replicas in (0, 1) if round_ % 2 == 0 else (1, 0):
                    env = {**base, "ROOKHAVEN_REDIS_MIN_REPLICAS": str(replicas)}
                    workers = WorkerFarm(env, logs)
                    try:
                        rates[replicas] = bulk(pipeline(env), digest, workers, args.jobs,
                                               f"r{round_}m{replicas}")
                    finally:
                        workers.stop_all()
                ratios.append(rates[1] / rates[0])
                print(f"round {round_ + 1}: MIN_REPLICAS=0 {rates[0]:.0f} jobs/s, "
                      f"=1 {rates[1]:.0f} jobs/s, ratio {ratios[-1]:.2f}", flush=True)
            print(f"median ratio MIN_REPLICAS=1 / =0: {statistics.median(ratios):.2f}")

            env = {**base, "ROOKHAVEN_REDIS_MIN_REPLICAS": "1", "ROOKHAVEN_BATCH_SIZE": "20"}
            workers = WorkerFarm(env, logs)
            try:
                pipe = pipeline(env)
                workers.start("f1", concurrency=1, beat=True)
                workers.start("f2", concurrency=1)
                before = stored(pipe, digest)
                ids = [r.job_id for r in pipe.submit_many(requests(args.jobs, "fo-"), "bench")]
                until(lambda: stored(pipe, digest) - before >= len(ids) // 10, 300, "a tenth")
                old = nodes.ports["primary"]
                killed = nodes.kill("primary")
                until(lambda: nodes.primary_port() not in (None, old), 120, "a new primary")
                promoted = time.monotonic()
                nodes.restart("primary")
                until(lambda: nodes.replica_of_primary("primary"), 120, "the host back")
                back = time.monotonic()
                until(lambda: _stored(pipe, digest) - before >= len(ids), 600, "every job",
                      interval=0.2)
                done = time.monotonic()
                print(f"failover: new primary {promoted - killed:.1f} s after the SIGKILL "
                      f"(down-after 1.5 s); lost host back as replica {back - killed:.1f} s; "
                      f"all {len(ids)} jobs done {done - killed:.1f} s after the SIGKILL")
            finally:
                workers.stop_all()
        finally:
            nodes.stop()


def _stored(pipe: Pipeline, digest: str) -> int:
    try:
        return stored(pipe, digest)
    except Exception:  # the store error while the Sentinels still name the dead primary
        return 0


if __name__ == "__main__":
    main()
