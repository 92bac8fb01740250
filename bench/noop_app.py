"""The workers' app plus the bench tasks of bench/pipeline.py: one that only counts (the
queue's own floor), one that ranks and stores with no ledger (the batch path's floor), and a
prototype of a ledger that keeps no state a job (ADR 0065).

They live here, not in ``workers``, so production workers carry no benchmark task.
"""

from __future__ import annotations

import hashlib
import os
import time
from typing import Any

import redis

from rookhaven import RetrievalRequest
from rookhaven.core.canonical import embeds
from rookhaven.pipeline import Executor, RetrieverCache
from rookhaven.store import Store
from rookhaven.store.jobs import decode_spec
from rookhaven.transparency.leaf import LeafFrame
from rookhaven.transparency.merkle import leaf_hash
from workers import app, consumer, settings

TASK_NOOP = "bench.noop"
TASK_RANK = "bench.rank"
TASK_LEDGER = "bench.ledger"
# The consumer takes only the product's tasks (ADR 0027: anything else is recorded as
# rejected); a worker started on this app takes the bench's tasks too.
consumer.TASKS = consumer.TASKS | {TASK_NOOP, TASK_RANK, TASK_LEDGER}
_clients: dict[int, redis.Redis] = {}  # one connection per pool process, like the store's
_caches: dict[int, RetrieverCache] = {}
_executors: dict[int, Executor] = {}

# The stateless ledger's three scripts: a message's record written with its jobs' recipes
# (and which of its jobs are answered already), claimed with the recipes read back, closed
# with its results' leaves and index entries. No key a job but its result, its leaf and its
# entry in the index of audits by time; a job's state is its result's existence.
# KEYS: record, open messages, then each job's result key. ARGV: now, the recipes (one blob).
RECORD = """
local stored = {}
for i = 3, #KEYS do stored[i - 2] = redis.call('EXISTS', KEYS[i]) end
redis.call('SET', KEYS[1], ARGV[2])
redis.call('ZADD', KEYS[2], ARGV[1], KEYS[1])
return stored
"""
# KEYS: record, claim, then each job's result key. ARGV: the claim's name.
CLAIM = """
redis.call('SET', KEYS[2], ARGV[1])
local stored = {}
for i = 3, #KEYS do stored[i - 2] = redis.call('EXISTS', KEYS[i]) end
return {redis.call('GET', KEYS[1]), stored}
"""
# KEYS: leaves, hashes, audits by time, record, open messages, claim, counter.
# ARGV: now (seconds), then (key, leaf, leaf hash) a result.
CLOSE = """
local n = (#ARGV - 1) / 3
local leaves, hashes, members = {}, {}, {}
for i = 1, n do
  local at = 2 + (i - 1) * 3
  leaves[i] = ARGV[at + 1]
  hashes[i] = ARGV[at + 2]
  members[2 * i - 1] = ARGV[1]
  members[2 * i] = ARGV[at]
end
redis.call('RPUSH', KEYS[1], unpack(leaves))
redis.call('APPEND', KEYS[2], table.concat(hashes))
redis.call('ZADD', KEYS[3], unpack(members))
redis.call('DEL', KEYS[4], KEYS[6])
redis.call('ZREM', KEYS[5], KEYS[4])
return redis.call('INCRBY', KEYS[7], n)
"""


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


def ledger_keys(prefix: str, message: str) -> dict[str, str]:
    """The prototype's keys: its message's record and claim, and what every message shares."""
    return {"record": f"{prefix}:m:{message}", "claim": f"{prefix}:m:{message}:claim",
            "open": f"{prefix}:open", "leaves": f"{prefix}:leaves",
            "hashes": f"{prefix}:hashes", "audits": f"{prefix}:audits"}


@app.task(name=TASK_LEDGER)
def ledger(counter: str, prefix: str, message: str, corpus: str, keys: list[str],
           recipes: list[str] | None = None) -> None:
    """A message of jobs under the stateless ledger: claim it (its recipes read back), run
    each job as the executor does (spec decoded, key checked, result and audit encoded),
    and store the results, their leaves and index entries with one MSETNX and one script
    in one transaction. With ``recipes`` the message carries them: no claim, no round trip
    before the ranking (the least a job alone could cost)."""
    pid = os.getpid()
    if pid not in _executors:  # the corpus is indexed by each pool process's first message
        _executors[pid] = Executor(Store.from_settings(settings), settings)
    executor, client = _executors[pid], _client()
    names = ledger_keys(prefix, message)
    results = [f"{prefix}:r:{key}" for key in keys]
    if recipes is None:
        blob, present = client.eval(CLAIM, 2 + len(keys), names["record"], names["claim"],
                                    *results, f"{pid}/{message}")
    else:
        blob, present = "\n".join(recipes).encode(), [0] * len(keys)
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    pairs: list[Any] = []
    args: list[Any] = [time.time()]
    frame: LeafFrame | None = None
    for key, recipe, done, where in zip(keys, blob.split(b"\n"), present, results,
                                        strict=True):
        if done:
            continue
        result, audit, engine = executor._compute(decode_spec(key, recipe))
        if not embeds(result, audit):
            raise AssertionError(f"{key}: the result does not embed its audit")
        if frame is None:  # a message shares its corpus and engine
            frame = LeafFrame(corpus, engine, now)
        leaf = frame.encode(key, result, audit)
        pairs += [where, result]
        args += [key, leaf, leaf_hash(leaf)]
    with client.pipeline(transaction=True) as pipe:
        if pairs:
            pipe.msetnx(dict(zip(pairs[0::2], pairs[1::2], strict=True)))
        pipe.eval(CLOSE, 7, names["leaves"], names["hashes"], names["audits"],
                  names["record"], names["open"], names["claim"], counter, *args)
        pipe.execute()
