"""Bulk re-ranking through two workers versus inline, and audits verified per second.

Run by hand (not a test), against a Redis you name; it starts and stops its own workers
and deletes its keys afterwards:

    .venv/bin/python bench/rerank.py --redis redis://127.0.0.1:6379/0 --queries 2000

Two identical stores (key prefixes) get the same history: N results over the shipped
port-operations corpus, then its edited next version. In the same run:
1. core: a Retriever on the new corpus answering the N requests in this process, no store;
2. inline: ``Reranker`` with an InlineDispatcher (this process, through the store);
3. workers: ``Reranker`` through ``celery -A workers worker -c 2`` on the second store;
4. verify: ``Verifier`` replaying every stored result of the first store (2N of them).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import redis  # noqa: E402

from rookhaven import RetrievalRequest, Retriever  # noqa: E402
from rookhaven.config import Settings  # noqa: E402
from rookhaven.pipeline import Pipeline, open_pipeline  # noqa: E402
from rookhaven.pipeline.inline import inline_pipeline  # noqa: E402
from rookhaven.rerank import Reranker, RerankSpec, summarize  # noqa: E402
from rookhaven.sampledata import sample_corpus, sample_requests  # noqa: E402
from rookhaven.verification import Selection, Verifier  # noqa: E402
from tests.integration.workerfarm import FAST, WorkerFarm  # noqa: E402


def history_requests(n: int) -> list[RetrievalRequest]:
    """``n`` requests: the shipped auditor queries with many seeds and budgets."""
    base = sample_requests()
    return [base[i % len(base)].model_copy(update={"seed": f"bench-{i}",
                                                   "recall_budget": 5 + i % 16})
            for i in range(n)]


def prepare(env: dict[str, str], n: int) -> tuple[Pipeline, RerankSpec]:
    settings = Settings.from_mapping(env)
    store = open_pipeline(settings).store
    inline = inline_pipeline(store, settings)
    inline.add_corpus(sample_corpus(), "port")
    inline.submit_many(history_requests(n), "port")
    inline.add_corpus(sample_corpus("port_ops_edited.jsonl"), "port")
    spec = RerankSpec(source="audits", corpus=store.corpora.resolve("port@1"),
                      target_corpus=store.corpora.resolve("port@2"), until=store.now(),
                      chunk=200)
    return inline, spec


def timed_rerank(pipe: Pipeline, spec: RerankSpec) -> tuple[float, int]:
    reranker = Reranker(pipe)
    started = time.perf_counter()
    rows = reranker.run(reranker.start(spec))
    elapsed = time.perf_counter() - started
    assert summarize("bench", rows).failed == 0
    return elapsed, len(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/0")
    parser.add_argument("--queries", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=2)
    args = parser.parse_args()
    base = {k: v for k, v in os.environ.items() if not k.startswith("ROOKHAVEN_")}
    prefixes = [f"rh-bench-rerank-{uuid.uuid4().hex[:8]}-{side}" for side in ("a", "b")]
    envs = [{**base, **FAST, "ROOKHAVEN_REDIS_URL": args.redis, "ROOKHAVEN_KEY_PREFIX": p,
             "ROOKHAVEN_LOG_LEVEL": "warning"} for p in prefixes]
    client = redis.Redis.from_url(args.redis)
    farm = WorkerFarm(envs[1], Path("/tmp"))
    try:
        inline_pipe, inline_spec = prepare(envs[0], args.queries)
        settings = Settings.from_mapping(envs[1])
        queue_pipe = open_pipeline(settings)
        _, queue_spec = prepare(envs[1], args.queries)

        requests = history_requests(args.queries)
        started = time.perf_counter()
        retriever = Retriever(sample_corpus("port_ops_edited.jsonl"), settings.provider)
        for request in requests:
            retriever.retrieve(request)
        core = time.perf_counter() - started

        inline, n = timed_rerank(inline_pipe, inline_spec)
        farm.start("bench-rerank", concurrency=args.concurrency)
        queued, _ = timed_rerank(queue_pipe, queue_spec)

        verifier = Verifier(inline_pipe.store, inline_pipe.settings)
        started = time.perf_counter()
        run = verifier.run(Selection(all=True))
        verify = time.perf_counter() - started
        assert run.clean, run.alarms
    finally:
        farm.stop_all()
        for prefix in prefixes:
            keys = list(client.scan_iter(match=f"{prefix}*", count=5000))
            for at in range(0, len(keys), 5000):
                client.delete(*keys[at: at + 5000])
    print(f"provider {settings.provider}; {n} historical queries; corpus 300 -> 305 docs")
    print(f"core (no store)        {n / core:9.0f} q/s")
    print(f"rerank inline          {n / inline:9.0f} q/s   ({inline / core:.1f}x the core's time)")
    print(f"rerank via {args.concurrency} workers    {n / queued:9.0f} q/s   "
          f"ratio workers/inline {inline / queued:.2f}")
    print(f"verify (replay+compare) {run.checked / verify:8.0f} audits/s ({run.checked} audits)")


if __name__ == "__main__":
    main()
