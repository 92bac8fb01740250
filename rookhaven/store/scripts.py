"""The Lua scripts behind every job transition, so each is one atomic step on the server.

A job's state, the open-job indexes, the ledger stream and (on completion) the result,
audit and audit indexes change together or not at all: a crash, a Redis restart or two
workers finishing the same job can never leave a record that disagrees with the result.

Every job script takes the same leading keys and arguments:
KEYS = job, jobs_queued, jobs_running, ledger, result, counters, jobs_delivered, ...;
ARGV = now, ledger max length, job id, ...
"""

from __future__ import annotations

_COMMON = """
local job, queued, running, ledger, result = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local counters, delivered = KEYS[6], KEYS[7]
local now, maxlen, id = ARGV[1], ARGV[2], ARGV[3]
local function event(name, detail)
  redis.call('XADD', ledger, 'MAXLEN', '~', maxlen, '*',
             'job', id, 'event', name, 'at', now, 'detail', detail or '')
  -- Counted with the event, so the metrics can never disagree with the ledger.
  redis.call('HINCRBY', counters, 'jobs_' .. name, 1)
end
-- ``error``, if given, is written in the same HSET.
local function close(state, detail, error)
  if error then
    redis.call('HSET', job, 'state', state, 'finished', now, 'updated', now, 'error', error)
  else
    redis.call('HSET', job, 'state', state, 'finished', now, 'updated', now)
  end
  redis.call('ZREM', queued, id)
  redis.call('ZREM', running, id)
  redis.call('ZREM', delivered, id)
  event(state, detail)
end
local state = redis.call('HGET', job, 'state')
"""

# ARGV[4..8] = request, corpus digest, provider, params, result key.
# 'cached' if the result exists (nothing written); the current state if the job is open or
# done (nothing written); 'new' when a job was recorded as queued and must be enqueued.
CREATE = _COMMON + """
if redis.call('EXISTS', result) == 1 then return 'cached' end
if state == 'done' then
  -- Done, but its result is gone (an eviction, a partial restore): compute it again, under
  -- the same key, with the same bytes.
  redis.call('HSET', job, 'state', 'queued', 'updated', now, 'finished', '', 'attempts', 0)
  redis.call('HINCRBY', job, 'enqueued', 1)
  redis.call('ZADD', queued, now, id)
  event('requeued', 'result missing')
  return 'new'
end
if state and state ~= 'failed' then return state end
redis.call('HSET', job, 'id', id, 'key', ARGV[8], 'request', ARGV[4], 'corpus', ARGV[5],
           'provider', ARGV[6], 'params', ARGV[7], 'state', 'queued', 'created', now,
           'updated', now, 'enqueued', 1, 'attempts', 0, 'started', '', 'finished', '',
           'worker', '', 'error', '')
redis.call('ZADD', queued, now, id)
event('queued', '')
return 'new'
"""

# ARGV[4..5] = worker instance, claim (unique to this delivery). Claims the job for the
# worker's batch; costs no attempt (see BEGIN). A later delivery of the same job (the
# sweeper's message and the broker's restored one) takes the claim over, so of two copies
# started together only the last begins and is charged.
# Returns {'run', attempts, request, corpus, provider, params} when the caller should
# compute, else {state}: 'missing', 'done' or 'failed' (skip it: a redelivered duplicate,
# or a job finished by someone else).
START = _COMMON + """
if not state then return {'missing'} end
if state == 'done' or state == 'failed' then return {state} end
if redis.call('EXISTS', result) == 1 then
  close('done', 'result already stored')
  return {'done'}
end
-- One read for the attempts and the spec (the HSET below touches neither).
local spec = redis.call('HMGET', job, 'attempts', 'request', 'corpus', 'provider', 'params')
redis.call('HSET', job, 'state', 'running', 'started', now, 'updated', now, 'worker', ARGV[4],
           'claim', ARGV[5])
redis.call('ZREM', queued, id)
redis.call('ZREM', delivered, id)
redis.call('ZADD', running, now, id)
event('running', ARGV[4])
return {'run', tostring(spec[1]), spec[2], spec[3], spec[4], spec[5]}
"""

# ARGV[4..6] = worker instance, max attempts, claim (START's). Called right before the job
# is computed: an attempt is charged here, per job, so a worker killed mid-batch costs an
# attempt only to the job it was computing, not to the batch's jobs it never began. A job
# that has begun max attempts times without finishing (its process died each time: killed,
# out of memory) is failed here, saying so, instead of being computed again.
# Returns {'run', attempts}, {'failed'}, or {state} when the job is no longer this
# worker's to run (swept back to queued, finished elsewhere, claimed by a later delivery,
# missing).
BEGIN = _COMMON + """
if state ~= 'running' then return {state or 'missing'} end
local held = redis.call('HMGET', job, 'worker', 'claim', 'attempts')
if held[1] ~= ARGV[4] or held[2] ~= ARGV[6] then return {state} end
local attempts = tonumber(held[3])
if attempts >= tonumber(ARGV[5]) then
  local last = redis.call('HGET', job, 'error')
  if not last or last == '' then
    last = 'began ' .. attempts .. ' time(s) and never finished: its worker process died ' ..
           'each time (killed, out of memory?); ROOKHAVEN_JOB_MAX_ATTEMPTS is ' .. ARGV[5]
  end
  close('failed', last, last)
  return {'failed'}
end
attempts = attempts + 1
redis.call('HSET', job, 'attempts', attempts, 'begun', now, 'updated', now)
return {'run', tostring(attempts)}
"""

# KEYS[8..13] = audit, audits_by_time, audits_by_corpus, violations, log leaves, log index;
# ARGV[4..10] = result bytes, audit bytes, result key, log leaf bytes, its leaf hash (32
# bytes), the key prefix of the level-0 log tiles, hashes per tile.
# Returns 'violation:result' / 'violation:audit' (nothing stored, job failed), 'done'
# (job moved to done), 'already-done' or 'stored' (no job record).
# A newly stored result gets its log leaf in this same step: the log's order is the order
# in which this script ran, so concurrent workers never fork the tree. A key already in
# the log (a result lost and recomputed, same bytes) gets no second leaf.
COMPLETE = _COMMON + """
local audit, by_time, by_corpus, violations = KEYS[8], KEYS[9], KEYS[10], KEYS[11]
local leaves, log_index = KEYS[12], KEYS[13]
local old = redis.call('MGET', result, audit)  -- one shard, one slot
local old_result, old_audit = old[1], old[2]
local what = nil
if old_result and old_result ~= ARGV[4] then what = 'result'
elseif old_audit and old_audit ~= ARGV[5] then what = 'audit' end
if what then
  redis.call('XADD', violations, '*', 'key', ARGV[6], 'job', id, 'what', what, 'at', now)
  redis.call('HINCRBY', counters, 'integrity_violations', 1)
  if state and state ~= 'done' then
    close('failed', 'integrity violation',
          'integrity violation: different ' .. what .. ' bytes offered under ' .. ARGV[6])
  end
  return 'violation:' .. what
end
if not old_result then
  redis.call('SET', result, ARGV[4])
  redis.call('HINCRBY', counters, 'results_stored', 1)
  if redis.call('HEXISTS', log_index, ARGV[6]) == 0 then
    local n = redis.call('RPUSH', leaves, ARGV[7]) - 1
    redis.call('HSET', log_index, ARGV[6], n)
    redis.call('APPEND', ARGV[9] .. math.floor(n / tonumber(ARGV[10])), ARGV[8])
  end
end
if not old_audit then redis.call('SET', audit, ARGV[5]) end
redis.call('ZADD', by_time, 'NX', now, ARGV[6])
redis.call('ZADD', by_corpus, 'NX', now, ARGV[6])
if not state then return 'stored' end
if state == 'done' then return 'already-done' end
close('done', '', '')
return 'done'
"""

# No extra keys or args. Reopens a done job whose result is gone: 'reopened' (enqueue it),
# else its state ('done' with its result, 'queued', ...) or 'missing'.
REOPEN = _COMMON + """
if not state then return 'missing' end
if state ~= 'done' or redis.call('EXISTS', result) == 1 then return state end
redis.call('HSET', job, 'state', 'queued', 'updated', now, 'finished', '', 'attempts', 0)
redis.call('HINCRBY', job, 'enqueued', 1)
redis.call('ZADD', queued, now, id)
event('requeued', 'result missing')
return 'reopened'
"""

# ARGV[4..6] = error text, '1' if retrying cannot help, max attempts.
# Returns 'failed', 'queued' (left for the sweeper to retry), or the unchanged state.
FAIL = _COMMON + """
if not state then return 'missing' end
if state == 'done' or state == 'failed' then return state end
redis.call('HSET', job, 'error', ARGV[4])
local attempts = tonumber(redis.call('HGET', job, 'attempts'))
if ARGV[5] == '1' or attempts >= tonumber(ARGV[6]) then
  close('failed', ARGV[4])
  return 'failed'
end
redis.call('HSET', job, 'state', 'queued', 'updated', now)
redis.call('ZREM', running, id)
redis.call('ZADD', queued, now, id)
event('retry', ARGV[4])
return 'queued'
"""

# ARGV[4..6] = the 'updated' time the sweeper saw, max attempts, why it is being swept.
# Returns 'requeue' (the caller must enqueue it), 'done' or 'failed' (closed here), or
# 'changed' / the state when the job moved on since the sweeper looked (nothing done).
REQUEUE = _COMMON + """
if not state then
  redis.call('ZREM', queued, id)
  redis.call('ZREM', running, id)
  redis.call('ZREM', delivered, id)
  return 'missing'
end
if state == 'done' or state == 'failed' then
  redis.call('ZREM', queued, id)
  redis.call('ZREM', running, id)
  redis.call('ZREM', delivered, id)
  return state
end
if redis.call('HGET', job, 'updated') ~= ARGV[4] then return 'changed' end
if redis.call('EXISTS', result) == 1 then
  close('done', 'result already stored')
  return 'done'
end
local attempts = tonumber(redis.call('HGET', job, 'attempts'))
if attempts >= tonumber(ARGV[5]) then
  local last = redis.call('HGET', job, 'error')
  if not last or last == '' then
    last = 'no result after ' .. attempts .. ' attempts (last: ' .. ARGV[6] .. ')'
  end
  close('failed', last, last)
  return 'failed'
end
redis.call('HSET', job, 'state', 'queued', 'updated', now)
redis.call('HINCRBY', job, 'enqueued', 1)
redis.call('ZREM', running, id)
redis.call('ZREM', delivered, id)
redis.call('ZADD', queued, now, id)
event('requeued', ARGV[6])
return 'requeue'
"""

# Not a job script: one call per message. KEYS = jobs_delivered, then each job's record;
# ARGV = now, worker instance, then each job id. A worker's main process calls it as a
# message arrives, before the pool starts it: a queued job is marked as delivered to that
# worker, so if the worker dies before START claims it, the sweeper sees it as the dead
# worker's at once instead of after ROOKHAVEN_SWEEP_AFTER. Only queued jobs are touched
# (no ledger event: nothing changed state). Returns how many were marked.
DELIVER = """
local delivered, now, worker = KEYS[1], ARGV[1], ARGV[2]
local marked, members = 0, {}
-- One ZADD per 500 marked jobs, not one per job (unpack's stack holds a few thousand).
local function add()
  if #members > 0 then redis.call('ZADD', delivered, unpack(members)) end
  members = {}
end
for i = 2, #KEYS do
  if redis.call('HGET', KEYS[i], 'state') == 'queued' then
    redis.call('HSET', KEYS[i], 'worker', worker, 'updated', now)
    members[#members + 1] = now
    members[#members + 1] = ARGV[i + 1]
    marked = marked + 1
    if #members == 1000 then add() end
  end
end
add()
return marked
"""
