"""Redis commands and Redis CPU per job, submitting and executing, read from INFO commandstats.

Run by hand (not a test) against a Redis of its own, since commandstats are server-wide:

    .venv/bin/python bench/queue_commands.py --redis redis://127.0.0.1:6391/0 --jobs 2000

Jobs go through ``Pipeline.submit_many`` and the workers' own ``Executor`` in this process,
100 per batch as a worker takes a message (Celery's own commands, about ten a message,
are not counted). Commands run inside scripts count, as Redis counts them; Redis CPU is the
server process's user + system time over each phase.

``--per-script`` also logs every command's time (``SLOWLOG``, threshold 0, restored after;
it slows the server a little) and prints, per job script (``store.scripts``), its calls and
server time a call, inner commands included, and EVALSHA's own cost: a script that only
returns, called with as many keys and arguments as a job script.

``--chunk N`` runs the executor with chunks of N jobs (``executor.CHUNK``) instead of its
own; ``--precomputed`` computes every result before the timed phases, so no engine work
runs between the store's calls (Redis's caches stay warm: the store's cost alone).
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import redis  # noqa: E402
from benchstore import bench_settings, delete_prefix, query_texts  # noqa: E402

from rookhaven import RetrievalRequest  # noqa: E402
from rookhaven.corpusfile import load_corpus  # noqa: E402
from rookhaven.pipeline import Executor, Pipeline  # noqa: E402
from rookhaven.pipeline import executor as executor_module  # noqa: E402
from rookhaven.pipeline.fake import RecordingDispatcher  # noqa: E402
from rookhaven.store import Store, scripts  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/0")
    parser.add_argument("--dataset", type=Path, default=ROOT.parent / "shared/datasets/npl")
    parser.add_argument("--jobs", type=int, default=2000)
    parser.add_argument("--batch", type=int, default=100)
    parser.add_argument("--shards", type=int, default=None,
                        help="log shards of the bench's store (default: flat)")
    parser.add_argument("--per-script", action="store_true",
                        help="server time per job script, from SLOWLOG")
    parser.add_argument("--chunk", type=int, default=None,
                        help="jobs a chunk (default: the executor's own)")
    parser.add_argument("--precomputed", action="store_true",
                        help="compute the results first: only the store's work is timed")
    args = parser.parse_args()
    if args.chunk:
        executor_module.CHUNK = args.chunk
    n, prefix = args.jobs, f"rh-cmds{time.time_ns()}"
    settings = bench_settings(args.redis, prefix, **(
        {"ROOKHAVEN_LOG_SHARDS": str(args.shards)} if args.shards else {}))
    store = Store.from_settings(settings)
    docs = load_corpus(args.dataset / "corpus.jsonl", max_docs=10**6)
    queries = query_texts(args.dataset)
    pipe = Pipeline(store, RecordingDispatcher(), settings)
    pipe.add_corpus(docs, "bench")
    executor = Executor(store, settings)
    warm = pipe.submit_many([RetrievalRequest(query="warm up", recall_budget=10, seed="w")],
                            "bench")
    executor.run([r.job_id for r in warm], "bench")
    client = redis.Redis.from_url(args.redis)

    def stats() -> dict[str, tuple[float, float]]:
        # Commands from commandstats; CPU from the server process's own user + system time
        # (commandstats' usec counts a script's inner commands twice: in EVALSHA and alone).
        cpu = client.info("cpu")
        return {"cpu": (0, 1e6 * (float(cpu["used_cpu_user"]) + float(cpu["used_cpu_sys"]))),
                **{name.removeprefix("cmdstat_"): (v["calls"], 0)
                   for name, v in client.info("commandstats").items()}}

    requests = [RetrievalRequest(query=queries[i % len(queries)], recall_budget=10,
                                 seed=f"c{i}") for i in range(n)]
    if args.precomputed:
        digest = store.corpora.resolve("bench")
        made = {}
        for request in requests:
            spec = pipe.spec(request, digest)
            made[spec.key] = executor._compute(spec)
        executor._compute = lambda spec: made[spec.key]  # type: ignore[method-assign]
    threshold = {k: str(v) for k, v in client.config_get("slowlog-*").items()}
    if args.per_script:
        client.config_set("slowlog-log-slower-than", 0)
        client.config_set("slowlog-max-len", 100 * n)
    try:
        client.slowlog_reset()
        before = stats()
        ids = [ref.job_id for ref in pipe.submit_many(requests, "bench")]
        submitted = stats()
        for at in range(0, n, args.batch):
            executor.run(ids[at: at + args.batch], "bench")
        executed = stats()
        total_calls, total_usec = 0.0, 0.0
        for label, a, b in (("submit", before, submitted), ("execute", submitted, executed)):
            calls = {k: b[k][0] - a.get(k, (0, 0))[0] for k in b}
            usec = b["cpu"][1] - a["cpu"][1]
            busy = {k: round(c / n, 2) for k, c in sorted(calls.items(), key=lambda x: -x[1])
                    if c and k not in ("info", "cpu")}
            total_calls += sum(busy.values())
            total_usec += usec
            print(f"{label}: {sum(busy.values()):.1f} commands a job, {usec / n:.1f} us of "
                  f"Redis CPU a job; {busy}")
        print(f"in all: {total_calls:.1f} commands and {total_usec / n:.1f} us of Redis CPU "
              f"a job ({n:,} jobs, {args.batch} a batch)")
        if args.per_script:
            per_script(client)
    finally:
        client.config_set("slowlog-log-slower-than", threshold["slowlog-log-slower-than"])
        client.config_set("slowlog-max-len", threshold["slowlog-max-len"])
        delete_prefix(store, prefix)


def per_script(client: redis.Redis) -> None:
    """Each job script's calls and server time a call (the slowlog since the reset), and
    what EVALSHA costs alone with a job script's thirteen keys and ten arguments."""
    names = {hashlib.sha1(text.encode()).hexdigest(): name for name, text in vars(scripts).items()
             if name.isupper() and isinstance(text, str)}
    spent: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for entry in client.slowlog_get(client.slowlog_len()):
        words = entry["command"].split(b" ")
        if words[0].lower() == b"evalsha" and len(words) > 1:
            found = spent[names.get(words[1].decode(), "other script")]
            found[0] += 1
            found[1] += entry["duration"]
    for name, (calls, usec) in sorted(spent.items(), key=lambda x: -x[1][1]):
        print(f"  {name:<12} {calls:>7,} calls, {usec / calls:6.1f} us a call")
    empty = client.register_script("return 1")
    keys, argv = [f"k{i}" for i in range(13)], ["x" * 20] * 10
    empty(keys=keys, args=argv)
    client.slowlog_reset()
    pipe = client.pipeline(transaction=False)
    for _ in range(2000):
        pipe.evalsha(empty.sha, len(keys), *keys, *argv)
    pipe.execute()
    took = [e["duration"] for e in client.slowlog_get(client.slowlog_len())
            if e["command"].lower().startswith(b"evalsha")]
    print(f"  EVALSHA of a script that only returns (13 keys, 10 arguments): "
          f"{sum(took) / max(len(took), 1):.1f} us a call")


if __name__ == "__main__":
    main()
