"""What would a job cost Redis with the message as the ledger's unit? Commands and CPU a job,
a prototype's scripts against the store's own lifecycle on the same NPL requests.

Run by hand against a Redis of its own (commandstats and CPU are server-wide):

    redis-server --port 6391 --save "" --appendonly no --daemonize yes
    .venv/bin/python bench/experiments/ledger_per_message.py \
        --redis redis://127.0.0.1:6391/0 --jobs 3000

Not the store's code: the scripts below are what `docs/adr/0036-*.md` proposed, written just
far enough to do the same Redis work as the real job lifecycle (every check a real script
makes, every write it would make), so their cost could be measured before the store was
rebuilt around them. It has been since (`rookhaven/store/scripts.py`); this stays as the
measured reference, and its "store today" line is now that store.

Per shard, a job's spec is a field of one hash written once, and its mutable state (state,
attempts, worker, claim, updated) one short string, a field of a second hash; every
transition reads and writes the fields of a whole message or chunk with one HMGET and one
HSET, writes one ledger event naming its jobs, and moves the index members with one multi-
member command. Results and audits go in with one MSET per chunk after one MGET.

The result and audit bytes are real: NPL requests answered by bm25@2 in this process.
The same run then times the store's own lifecycle (`Pipeline.submit_many`, `Executor.run`)
on the same requests, for the comparison.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import redis  # noqa: E402
from benchstore import bench_settings, delete_prefix, query_texts  # noqa: E402

from rookhaven import RetrievalRequest, Retriever  # noqa: E402
from rookhaven.corpusfile import load_corpus  # noqa: E402
from rookhaven.pipeline import Executor, Pipeline  # noqa: E402
from rookhaven.pipeline.fake import RecordingDispatcher  # noqa: E402
from rookhaven.store import Store  # noqa: E402

# KEYS = spec, state, queued, ledger, counters, then each job's result key;
# ARGV = now, then ids, then specs. Jobs with a state or a stored result are left alone.
CREATE = """
local spec, state, queued, ledger, counters = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local now, n = ARGV[1], (#ARGV - 1) / 2
local ids = {}
for i = 1, n do ids[i] = ARGV[1 + i] end
local results = {}
for i = 1, n do results[i] = KEYS[5 + i] end
local stored = redis.call('EXISTS', unpack(results))
local states = redis.call('HMGET', state, unpack(ids))
local specs, fresh, members, names = {}, {}, {}, {}
for i = 1, n do
  local new = not states[i]
  if new and stored > 0 then new = redis.call('EXISTS', results[i]) == 0 end
  if new then
    specs[#specs + 1] = ids[i]; specs[#specs + 1] = ARGV[1 + n + i]
    fresh[#fresh + 1] = ids[i]; fresh[#fresh + 1] = 'q|0|||' .. now
    members[#members + 1] = now; members[#members + 1] = ids[i]
    names[#names + 1] = ids[i]
  end
end
if #names == 0 then return 0 end
redis.call('HSET', spec, unpack(specs))
redis.call('HSET', state, unpack(fresh))
redis.call('ZADD', queued, unpack(members))
redis.call('XADD', ledger, 'MAXLEN', '~', 1000000, '*', 'jobs', table.concat(names, ' '),
           'event', 'queued', 'at', now)
redis.call('HINCRBY', counters, 'jobs_queued', #names)
return #names
"""

# KEYS = state, delivered; ARGV = now, worker, ids. Marks queued jobs as delivered.
DELIVER = """
local state, delivered, now, worker = KEYS[1], KEYS[2], ARGV[1], ARGV[2]
local ids = {}
for i = 3, #ARGV do ids[#ids + 1] = ARGV[i] end
local states = redis.call('HMGET', state, unpack(ids))
local fields, members = {}, {}
for i = 1, #ids do
  local s = states[i]
  if s and string.sub(s, 1, 1) == 'q' then
    local attempts = string.match(s, '^q|(%d+)|')
    fields[#fields + 1] = ids[i]
    fields[#fields + 1] = 'q|' .. attempts .. '|' .. worker .. '||' .. now
    members[#members + 1] = now; members[#members + 1] = ids[i]
  end
end
if #fields == 0 then return 0 end
redis.call('HSET', state, unpack(fields))
redis.call('ZADD', delivered, unpack(members))
return #members / 2
"""

# KEYS = spec, state, queued, running, delivered, ledger, counters, then result keys;
# ARGV = now, worker, claim, ids. Claims the queued jobs; returns each one's spec or false.
START = """
local spec, state, queued, running, delivered = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local ledger, counters = KEYS[6], KEYS[7]
local now, worker, claim = ARGV[1], ARGV[2], ARGV[3]
local ids, results = {}, {}
for i = 4, #ARGV do ids[#ids + 1] = ARGV[i]; results[#results + 1] = KEYS[4 + i] end
local states = redis.call('HMGET', state, unpack(ids))
local stored = redis.call('EXISTS', unpack(results))
local specs = redis.call('HMGET', spec, unpack(ids))
local fields, members, names, out = {}, {}, {}, {}
for i = 1, #ids do
  local s = states[i]
  local run = s and string.sub(s, 1, 1) == 'q'
  if run and stored > 0 then run = redis.call('EXISTS', results[i]) == 0 end
  if run then
    local attempts = string.match(s, '^q|(%d+)|')
    fields[#fields + 1] = ids[i]
    fields[#fields + 1] = 'r|' .. attempts .. '|' .. worker .. '|' .. claim .. '|' .. now
    members[#members + 1] = now; members[#members + 1] = ids[i]
    names[#names + 1] = ids[i]
    out[i] = specs[i]
  else
    out[i] = false
  end
end
if #names > 0 then
  redis.call('HSET', state, unpack(fields))
  redis.call('ZREM', queued, unpack(names))
  redis.call('ZREM', delivered, unpack(names))
  redis.call('ZADD', running, unpack(members))
  redis.call('XADD', ledger, 'MAXLEN', '~', 1000000, '*', 'jobs', table.concat(names, ' '),
             'event', 'running', 'at', now, 'detail', worker)
  redis.call('HINCRBY', counters, 'jobs_running', #names)
end
return out
"""

# KEYS = state; ARGV = now, worker, claim, max attempts, ids. Charges a chunk an attempt.
BEGIN = """
local state, now, worker, claim, limit = KEYS[1], ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4])
local ids = {}
for i = 5, #ARGV do ids[#ids + 1] = ARGV[i] end
local states = redis.call('HMGET', state, unpack(ids))
local fields, out = {}, {}
for i = 1, #ids do
  local s = states[i]
  local kind, attempts, w, c = string.match(s or '', '^(%a)|(%d+)|([^|]*)|([^|]*)|')
  if kind == 'r' and w == worker and c == claim and tonumber(attempts) < limit then
    attempts = tonumber(attempts) + 1
    fields[#fields + 1] = ids[i]
    fields[#fields + 1] = 'r|' .. attempts .. '|' .. worker .. '|' .. claim .. '|' .. now
    out[i] = attempts
  else
    out[i] = 0
  end
end
if #fields > 0 then redis.call('HSET', state, unpack(fields)) end
return out
"""

# The end of both completing scripts: index the audits, close the chunk's jobs in one HSET,
# one ledger event naming them.
_CLOSE = """
redis.call('ZADD', by_time, 'NX', unpack(times))
redis.call('ZADD', by_corpus, 'NX', unpack(times))
redis.call('HSET', state, unpack(closing))
redis.call('ZREM', running, unpack(ids))
redis.call('XADD', ledger, 'MAXLEN', '~', 1000000, '*', 'jobs', table.concat(ids, ' '),
           'event', 'done', 'at', now)
redis.call('HINCRBY', counters, 'jobs_done', n)
return n
"""

# KEYS = state, running, ledger, counters, by_time, by_corpus, leaves, log_index, tile, then
# each job's result and audit keys; ARGV = now, then per job: id, result, audit, leaf, leaf hash.
COMPLETE = """
local state, running, ledger, counters = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local by_time, by_corpus, leaves, log_index, tile = KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9]
local now, n = ARGV[1], (#ARGV - 1) / 5
local ids, pairs_ = {}, {}
for i = 1, n do
  ids[i] = ARGV[2 + 5 * (i - 1)]
  pairs_[#pairs_ + 1] = KEYS[9 + 2 * i - 1]; pairs_[#pairs_ + 1] = KEYS[9 + 2 * i]
end
local old = redis.call('MGET', unpack(pairs_))
local logged = redis.call('HMGET', log_index, unpack(ids))
local writes, stored, leaf_list, hashes, index_fields, times, closing = {}, 0, {}, {}, {}, {}, {}
for i = 1, n do
  local at = 2 + 5 * (i - 1)
  local result, audit = ARGV[at + 1], ARGV[at + 2]
  local old_result, old_audit = old[2 * i - 1], old[2 * i]
  if (old_result and old_result ~= result) or (old_audit and old_audit ~= audit) then
    return redis.error_reply('violation ' .. ids[i])
  end
  if not old_result then
    writes[#writes + 1] = pairs_[2 * i - 1]; writes[#writes + 1] = result
    stored = stored + 1
    if not logged[i] then
      leaf_list[#leaf_list + 1] = ARGV[at + 3]
      hashes[#hashes + 1] = ARGV[at + 4]
      index_fields[#index_fields + 1] = ids[i]
      index_fields[#index_fields + 1] = 0  -- the leaf's index, known after RPUSH
    end
  end
  if not old_audit then writes[#writes + 1] = pairs_[2 * i]; writes[#writes + 1] = audit end
  times[#times + 1] = now; times[#times + 1] = ids[i]
  closing[#closing + 1] = ids[i]; closing[#closing + 1] = 'd|0|||' .. now
end
if #writes > 0 then redis.call('MSET', unpack(writes)) end
if #leaf_list > 0 then
  local last = redis.call('RPUSH', leaves, unpack(leaf_list)) - 1
  local first = last - #leaf_list + 1
  for j = 2, #index_fields, 2 do index_fields[j] = first + j / 2 - 1 end
  redis.call('HSET', log_index, unpack(index_fields))
  redis.call('APPEND', tile, table.concat(hashes))
  redis.call('HINCRBY', counters, 'results_stored', stored)
end
""" + _CLOSE

# KEYS as COMPLETE's first nine; ARGV = now, then per job: id, leaf, leaf hash. Runs right
# after the chunk's MSETNX of its results and audits (one command, no bytes through Lua),
# in the same round trip; only when that MSETNX stored them all (the case measured here:
# otherwise each key is set with SET NX and compared, and this runs for the new ones).
LOGGED = """
local state, running, ledger, counters = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local by_time, by_corpus, leaves, log_index, tile = KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9]
local now, n = ARGV[1], (#ARGV - 1) / 3
local ids, leaf_list, hashes = {}, {}, {}
for i = 1, n do
  ids[i] = ARGV[2 + 3 * (i - 1)]
  leaf_list[i] = ARGV[3 + 3 * (i - 1)]
  hashes[i] = ARGV[4 + 3 * (i - 1)]
end
local logged = redis.call('HMGET', log_index, unpack(ids))
local new_leaves, new_hashes, index_fields, times, closing = {}, {}, {}, {}, {}
for i = 1, n do
  if not logged[i] then
    new_leaves[#new_leaves + 1] = leaf_list[i]
    new_hashes[#new_hashes + 1] = hashes[i]
    index_fields[#index_fields + 1] = ids[i]
    index_fields[#index_fields + 1] = 0
  end
  times[#times + 1] = now; times[#times + 1] = ids[i]
  closing[#closing + 1] = ids[i]; closing[#closing + 1] = 'd|0|||' .. now
end
if #new_leaves > 0 then
  local last = redis.call('RPUSH', leaves, unpack(new_leaves)) - 1
  local first = last - #new_leaves + 1
  for j = 2, #index_fields, 2 do index_fields[j] = first + j / 2 - 1 end
  redis.call('HSET', log_index, unpack(index_fields))
  redis.call('APPEND', tile, table.concat(new_hashes))
  redis.call('HINCRBY', counters, 'results_stored', #new_leaves)
end
""" + _CLOSE


def _stats(client: Any) -> tuple[int, float]:
    cpu = client.info("cpu")
    calls = sum(v["calls"] for v in client.info("commandstats").values())
    return calls, 1e6 * (float(cpu["used_cpu_user"]) + float(cpu["used_cpu_sys"]))


def _prototype(client: Any, prefix: str, jobs: list[tuple[str, bytes, bytes, bytes]],
               batch: int, chunk: int, outside: bool) -> tuple[float, float, float, float]:
    """Submit and run ``jobs`` (id, spec, result, audit) through the prototype scripts;
    commands and Redis CPU a job, submitting and executing."""
    k = {name: f"{prefix}:{name}" for name in (
        "spec", "state", "queued", "running", "delivered", "ledger", "counters", "by_time",
        "by_corpus", "leaves", "log_index")}
    create, deliver, start, begin, complete, logged = (client.register_script(s) for s in (
        CREATE, DELIVER, START, BEGIN, COMPLETE, LOGGED))
    client.script_load(LOGGED)  # sent by EVALSHA in a pipeline below

    def result(i: str) -> str:
        return f"{prefix}:result:{i}"

    def audit(i: str) -> str:
        return f"{prefix}:audit:{i}"

    calls0, cpu0 = _stats(client)
    for at in range(0, len(jobs), batch):
        part = jobs[at:at + batch]
        create(keys=[k["spec"], k["state"], k["queued"], k["ledger"], k["counters"],
                     *(result(j[0]) for j in part)],
               args=[f"{time.time():.3f}", *(j[0] for j in part), *(j[1] for j in part)])
    calls1, cpu1 = _stats(client)
    for at in range(0, len(jobs), batch):
        part = jobs[at:at + batch]
        ids = [j[0] for j in part]
        deliver(keys=[k["state"], k["delivered"]], args=[f"{time.time():.3f}", "w1", *ids])
        specs = start(keys=[k["spec"], k["state"], k["queued"], k["running"], k["delivered"],
                            k["ledger"], k["counters"], *(result(i) for i in ids)],
                      args=[f"{time.time():.3f}", "w1", "w1/c", *ids])
        assert all(specs), "every job is claimed"
        for c in range(0, len(part), chunk):
            these = part[c:c + chunk]
            charged = begin(keys=[k["state"]], args=[f"{time.time():.3f}", "w1", "w1/c", 3,
                                                     *(j[0] for j in these)])
            assert all(charged), charged
            args: list[Any] = [f"{time.time():.3f}"]
            keys = [k["state"], k["running"], k["ledger"], k["counters"], k["by_time"],
                    k["by_corpus"], k["leaves"], k["log_index"], f"{prefix}:tile:0"]
            pairs: dict[str, bytes] = {}
            for job_id, _, res, aud in these:
                leaf = job_id.encode() + hashlib.sha256(res).digest() + hashlib.sha256(aud).digest()
                leaf_hash = hashlib.sha256(b"\0" + leaf).digest()
                if outside:
                    args += [job_id, leaf, leaf_hash]
                    pairs[result(job_id)], pairs[audit(job_id)] = res, aud
                else:
                    args += [job_id, res, aud, leaf, leaf_hash]
                    keys += [result(job_id), audit(job_id)]
            if outside:
                pipe = client.pipeline(transaction=False)
                pipe.msetnx(pairs)
                pipe.evalsha(logged.sha, len(keys), *keys, *args)
                stored, done = pipe.execute()
                assert stored and done == len(these)
            else:
                assert complete(keys=keys, args=args) == len(these)
    calls2, cpu2 = _stats(client)
    n = len(jobs)
    return ((calls1 - calls0) / n, (cpu1 - cpu0) / n, (calls2 - calls1) / n, (cpu2 - cpu1) / n)


def _store(url: str, prefix: str, docs: Any, requests: list[RetrievalRequest],
           batch: int) -> tuple[float, float, float, float]:
    """The same requests through the store's own submit and Executor (the engine included
    in the process, not in Redis's CPU)."""
    settings = bench_settings(url, prefix)
    store = Store.from_settings(settings)
    client = redis.Redis.from_url(url)
    pipe = Pipeline(store, RecordingDispatcher(), settings)
    pipe.add_corpus(docs, "bench")
    executor = Executor(store, settings)
    warm = pipe.submit_many([RetrievalRequest(query="warm up", seed="w")], "bench")
    executor.run([r.job_id for r in warm], "bench")
    try:
        calls0, cpu0 = _stats(client)
        ids = [ref.job_id for ref in pipe.submit_many(requests, "bench")]
        calls1, cpu1 = _stats(client)
        for at in range(0, len(ids), batch):
            store.jobs.deliver(ids[at:at + batch], "bench")
            executor.run(ids[at:at + batch], "bench")
        calls2, cpu2 = _stats(client)
    finally:
        delete_prefix(store, prefix)
    n = len(requests)
    return ((calls1 - calls0) / n, (cpu1 - cpu0) / n, (calls2 - calls1) / n, (cpu2 - cpu1) / n)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--redis", default="redis://127.0.0.1:6391/0")
    parser.add_argument("--dataset", type=Path, default=ROOT.parent / "shared/datasets/npl")
    parser.add_argument("--jobs", type=int, default=3000)
    parser.add_argument("--batch", type=int, default=100)
    parser.add_argument("--chunk", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--outside", action="store_true",
                        help="results and audits by one MSETNX a chunk, not through Lua")
    args = parser.parse_args()
    docs = load_corpus(args.dataset / "corpus.jsonl", max_docs=10**6)
    queries = query_texts(args.dataset)
    retriever = Retriever(docs, "bm25@2")
    client = redis.Redis.from_url(args.redis)
    for round_ in range(1, args.rounds + 1):
        requests = [RetrievalRequest(query=queries[i % len(queries)], recall_budget=10,
                                     seed=f"r{round_}-{i}") for i in range(args.jobs)]
        jobs = []
        for request in requests:
            res, aud = retriever.result_bytes(request)
            spec = request.model_dump_json().encode()
            jobs.append(("sha256:" + hashlib.sha256(spec).hexdigest(), spec, res, aud))
        prefix = f"rh-proto{time.time_ns()}"
        try:
            proto = _prototype(client, prefix, jobs, args.batch, args.chunk, args.outside)
        finally:
            for key in client.scan_iter(match=f"{prefix}:*", count=1000):
                client.delete(key)
        store = _store(args.redis, f"rh-store{time.time_ns()}", docs, requests, args.batch)
        for name, (sc, su, ec, eu) in (("store today", store), ("prototype", proto)):
            print(f"round {round_} {name:>11}: submit {sc:.2f} commands {su:.1f} us, execute "
                  f"{ec:.2f} commands {eu:.1f} us; in all {sc + ec:.2f} commands, "
                  f"{su + eu:.1f} us of Redis CPU a job", flush=True)


if __name__ == "__main__":
    main()
