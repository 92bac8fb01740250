"""The workers' app plus two floor tasks for bench/pipeline.py: one that only counts (the
queue's own floor) and one that ranks and stores with no ledger (the batch path's floor).

They live here, not in ``workers``, so production workers carry no benchmark task.
"""

from __future__ import annotations

import hashlib
import os
from typing import Any

import redis

from rookhaven import RetrievalRequest
from rookhaven.pipeline import RetrieverCache
from rookhaven.store import Store
from workers import app, consumer, settings

TASK_NOOP = "bench.noop"
TASK_RANK = "bench.rank"
# The consumer takes only the product's tasks (ADR 0027: anything else is recorded as
# rejected); a worker started on this app takes the floors' tasks too.
consumer.TASKS = consumer.TASKS | {TASK_NOOP, TASK_RANK}
_clients: dict[int, redis.Redis] = {}  # one connection per pool process, like the store's
_caches: dict[int, RetrieverCache] = {}


def _client() -> redis.Redis:
    pid = os.getpid()
    if pid not in _clients:
        _clients[pid] = redis.Redis.from_url(app.conf.broker_url)
    return _clients[pid]


@app.task(name=TASK_NOOP)
def noop(counter: str) -> None:
    """Add one to the Redis key ``counter``."""
    _client().incr(counter)


@app.task(name=TASK_RANK)
def rank(counter: str, digest: str, provider: str, params: dict[str, Any],
         requests: list[str]) -> None:
    """Rank each request (its JSON) as a job does (``result_bytes``), store every result
    under its sha256 with one MSET, and add their number to ``counter``: what any job
    system on this queue must do for a message of jobs, with no ledger, claim or log."""
    pid = os.getpid()
    if pid not in _caches:  # the corpus is indexed by each pool process's first message
        _caches[pid] = RetrieverCache(Store.from_settings(settings).corpora.stream, 1)
    retriever = _caches[pid].get(digest, provider, params)
    results = {}
    for line in requests:
        result, _ = retriever.result_bytes(RetrievalRequest.model_validate_json(line))
        results[f"{counter}:{hashlib.sha256(result).hexdigest()}"] = result
    with _client().pipeline(transaction=False) as pipe:
        pipe.mset(results)
        pipe.incrby(counter, len(requests))
        pipe.execute()
