"""The Lua scripts behind every job transition, so each is one atomic step on the server.

A job's state, the open-job indexes, the ledger stream and (on completion) the log leaves
and audit indexes change together or not at all: a crash, a Redis restart or two workers
finishing the same job can never leave a record that disagrees with the result.

Each script works on many jobs of one shard at once (a message's or a chunk's): per shard,
a job's spec is a field of one hash, written once, and its mutable state one short string, a
field of another (docs/adr/0036-the-message-as-the-ledgers-unit.md), so a transition of
n jobs reads them with one HMGET and writes them with one HSET, moves them between the
open-job indexes with one command per index, and writes one ledger event per kind of change
naming its jobs. The Python side sends at most ``MAX_JOBS`` jobs a call.

Every job script takes the same leading keys and arguments:
KEYS = specs, states, errors, jobs_queued, jobs_running, jobs_delivered, ledger, counters,
log index, ...; ARGV = now, ledger max length, ...
"""

from __future__ import annotations

# Jobs per script call: every list a script unpacks (HMGET's fields, ZADD's score and
# member pairs) stays far below Lua's stack limit of ~8,000.
MAX_JOBS = 500

# A job's state string: state|attempts|enqueued|created|updated|started|finished|worker|claim.
# A worker's name holds no '|' (host:pid:token); a claim is the worker's name and a token.
_PRELUDE = """
local specs, states, errors, queued, running = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local delivered, ledger, counters, log_index = KEYS[6], KEYS[7], KEYS[8], KEYS[9]
local now, maxlen = ARGV[1], ARGV[2]

local function parse(s)
  if not s then return false end
  -- One match, not a loop: the interpreter's per-step cost is most of a script's time.
  local state, attempts, enqueued, created, updated, started, finished, worker, claim =
    string.match(s, '^([^|]*)|([^|]*)|([^|]*)|([^|]*)|([^|]*)|([^|]*)|([^|]*)|([^|]*)|(.*)$')
  return {state = state, attempts = tonumber(attempts), enqueued = tonumber(enqueued),
          created = created, updated = updated, started = started, finished = finished,
          worker = worker, claim = claim}
end

local function pack(j)
  return j.state .. '|' .. j.attempts .. '|' .. j.enqueued .. '|' .. j.created .. '|' ..
         j.updated .. '|' .. j.started .. '|' .. j.finished .. '|' .. j.worker .. '|' .. j.claim
end

-- Jobs read once, changed in place, written once at the end (``flush``): an id that comes
-- twice in one call sees its own earlier change, as it would in two calls. A changed job is
-- placed again in the open-job indexes by its final state.
local cur, dirty, order = {}, {}, {}
local function load(ids)
  local raw = redis.call('HMGET', states, unpack(ids))
  for i = 1, #ids do
    if cur[ids[i]] == nil then cur[ids[i]] = parse(raw[i]) end
  end
end
-- The ids in ARGV from ``first`` on, and their state strings (false where none).
local function read(first)
  local ids = {}
  for i = first, #ARGV do ids[#ids + 1] = ARGV[i] end
  return ids, redis.call('HMGET', states, unpack(ids))
end
local function put(id, j)
  cur[id] = j
  if not dirty[id] then dirty[id] = true; order[#order + 1] = id end
end

-- One ledger event naming ``ids`` (in order), counted with the event, so the metrics can
-- never disagree with the ledger.
local function record(name, ids, detail)
  redis.call('XADD', ledger, 'MAXLEN', '~', maxlen, '*', 'jobs', table.concat(ids, ' '),
             'event', name, 'at', now, 'detail', detail)
  redis.call('HINCRBY', counters, 'jobs_' .. name, #ids)
end

-- The generic path's events, one per (name, detail).
local events, event_order = {}, {}
local function event(name, id, detail)
  detail = detail or ''
  local g = name .. '\\0' .. detail
  if not events[g] then
    events[g] = {name = name, detail = detail, ids = {}}
    event_order[#event_order + 1] = g
  end
  local ids = events[g].ids
  ids[#ids + 1] = id
end

local errors_set, errors_cleared = {}, {}
local function close(id, j, state, detail, err)
  j.state, j.finished, j.updated = state, now, now
  put(id, j)
  if err then errors_set[#errors_set + 1] = id; errors_set[#errors_set + 1] = err end
  event(state, id, detail)
end

-- Write every changed job, its index membership (from its final state) and the events.
local function flush()
  if #order == 0 then return end
  local fields, add_queued, add_running, leave_queued, leave_running, leave_delivered =
    {}, {}, {}, {}, {}, {}
  for _, id in ipairs(order) do
    local j = cur[id]
    fields[#fields + 1] = id; fields[#fields + 1] = pack(j)
    if j.state == 'queued' then
      add_queued[#add_queued + 1] = j.updated; add_queued[#add_queued + 1] = id
      leave_running[#leave_running + 1] = id; leave_delivered[#leave_delivered + 1] = id
    elseif j.state == 'running' then
      add_running[#add_running + 1] = j.started; add_running[#add_running + 1] = id
      leave_queued[#leave_queued + 1] = id; leave_delivered[#leave_delivered + 1] = id
    else
      leave_queued[#leave_queued + 1] = id; leave_running[#leave_running + 1] = id
      leave_delivered[#leave_delivered + 1] = id
    end
  end
  redis.call('HSET', states, unpack(fields))
  if #errors_set > 0 then redis.call('HSET', errors, unpack(errors_set)) end
  if #errors_cleared > 0 then redis.call('HDEL', errors, unpack(errors_cleared)) end
  if #leave_queued > 0 then redis.call('ZREM', queued, unpack(leave_queued)) end
  if #leave_running > 0 then redis.call('ZREM', running, unpack(leave_running)) end
  if #leave_delivered > 0 then redis.call('ZREM', delivered, unpack(leave_delivered)) end
  if #add_queued > 0 then redis.call('ZADD', queued, unpack(add_queued)) end
  if #add_running > 0 then redis.call('ZADD', running, unpack(add_running)) end
  for _, g in ipairs(event_order) do
    local e = events[g]
    record(e.name, e.ids, e.detail)
  end
end

-- Whether result key ``KEYS[at]`` exists, asked only if ``any`` of them does.
local function stored(any, at)
  return any > 0 and redis.call('EXISTS', KEYS[at]) == 1
end

-- Whether result ``id`` (stored) is in the log: a result written by a worker that died
-- before the script that logs it has no leaf, and its job must run again to log it.
local function logged(id)
  return redis.call('HEXISTS', log_index, id) == 1
end
"""

# KEYS[10..] = each job's result key; ARGV[3] = n, ARGV[4..3+n] = ids, then their specs.
# Per job: 'cached' if the result exists (nothing written); the current state if the job is
# open (nothing written); 'new' when it was recorded as queued and must be enqueued (a new
# or failed job; a done one whose result is gone, recomputed under the same key).
CREATE = _PRELUDE + """
local n = tonumber(ARGV[3])
local ids = {}
for i = 1, n do ids[i] = ARGV[3 + i] end
local raw = redis.call('HMGET', states, unpack(ids))
local any = redis.call('EXISTS', unpack(KEYS, 10, 9 + n))
local new_specs, fresh, members, named, out, seen = {}, {}, {}, {}, {}, {}
for i = 1, n do
  local id = ids[i]
  if stored(any, 9 + i) then
    out[i] = 'cached'
  elseif seen[id] then
    out[i] = seen[id]  -- as the first copy left it
  elseif not raw[i] then
    -- The usual case, a job never seen: written without a job table.
    seen[id] = 'queued'
    new_specs[#new_specs + 1] = id; new_specs[#new_specs + 1] = ARGV[3 + n + i]
    fresh[#fresh + 1] = id; fresh[#fresh + 1] = 'queued|0|1|' .. now .. '|' .. now .. '||||'
    members[#members + 1] = now; members[#members + 1] = id
    named[#named + 1] = id
    out[i] = 'new'
  else
    load({id})
    local j = cur[id]
    if j.state == 'done' then
      j.state, j.updated, j.finished, j.attempts = 'queued', now, '', 0
      j.enqueued = j.enqueued + 1
      put(id, j)
      event('requeued', id, 'result missing')
      out[i] = 'new'
    elseif j.state ~= 'failed' then
      out[i] = j.state
    else
      errors_cleared[#errors_cleared + 1] = id
      new_specs[#new_specs + 1] = id; new_specs[#new_specs + 1] = ARGV[3 + n + i]
      put(id, {state = 'queued', attempts = 0, enqueued = 1, created = now, updated = now,
               started = '', finished = '', worker = '', claim = ''})
      event('queued', id)
      out[i] = 'new'
    end
    seen[id] = out[i] == 'new' and 'queued' or out[i]
  end
end
if #new_specs > 0 then redis.call('HSET', specs, unpack(new_specs)) end
if #fresh > 0 then
  redis.call('HSET', states, unpack(fresh))
  redis.call('ZADD', queued, unpack(members))
  record('queued', named, '')
end
flush()
return out
"""

# KEYS[10..] = each job's result key; ARGV[3..5] = worker instance, claim (unique to this
# delivery), '1' to begin the fresh jobs (else '0'); ARGV[6..] = ids.
# Claims the jobs for the worker's batch. A later delivery of the same job (the sweeper's
# message and the broker's restored one) takes the claim over, so of two copies started
# together only the last begins. A job never begun before (no attempt charged) is begun
# here when asked, charged its first attempt as BEGIN would: a message's fresh jobs then
# cost no second call; a job begun before is left for BEGIN, in a chunk of its own.
# Per job: {'run', attempts, spec} when the caller should begin it (BEGIN) and compute it,
# {'begun', '1', spec} when it is begun here and the caller should compute it, else
# {state}: 'missing', 'done' or 'failed' (skip it: a redelivered duplicate, or a job
# finished by someone else).
START = _PRELUDE + """
local worker, claim, fresh = ARGV[3], ARGV[4], ARGV[5] == '1'
local ids, raw = read(6)
local any = redis.call('EXISTS', unpack(KEYS, 10, 9 + #ids))
local found = redis.call('HMGET', specs, unpack(ids))
local claimed, members, named, out, seen = {}, {}, {}, {}, {}
for i = 1, #ids do
  local id = ids[i]
  local state, attempts, enqueued, created, finished = string.match(raw[i] or '',
    '^([^|]*)|([^|]*)|([^|]*)|([^|]*)|[^|]*|[^|]*|([^|]*)|')
  if seen[id] then
    out[i] = out[seen[id]]
  elseif not state then
    out[i] = {'missing'}
  elseif state == 'done' or state == 'failed' then
    out[i] = {state}
  elseif stored(any, 9 + i) and logged(id) then
    load({id})
    close(id, cur[id], 'done', 'result already stored')
    out[i] = {'done'}
  else
    -- Queued, or running under an earlier claim: this delivery takes it.
    local verdict = 'run'
    if fresh and attempts == '0' then verdict, attempts = 'begun', '1' end
    claimed[#claimed + 1] = id
    claimed[#claimed + 1] = 'running|' .. attempts .. '|' .. enqueued .. '|' .. created ..
      '|' .. now .. '|' .. now .. '|' .. finished .. '|' .. worker .. '|' .. claim
    members[#members + 1] = now; members[#members + 1] = id
    named[#named + 1] = id
    out[i] = {verdict, attempts, found[i]}
  end
  seen[id] = seen[id] or i
end
if #named > 0 then
  redis.call('HSET', states, unpack(claimed))
  redis.call('ZREM', queued, unpack(named))
  redis.call('ZREM', delivered, unpack(named))
  redis.call('ZADD', running, unpack(members))
  record('running', named, worker)
end
flush()
return out
"""

# ARGV[3..5] = worker instance, max attempts, claim (START's); ARGV[6..] = ids. Called right
# before a chunk is computed: an attempt is charged here, so a worker killed mid-batch costs
# an attempt only to the chunk it was computing, not to the batch's jobs it never began. A
# job that has begun max attempts times without finishing (its process died each time:
# killed, out of memory) is failed here, saying so, instead of being computed again.
# Per job: {'run', attempts}, {'failed'}, or {state} when it is no longer this delivery's to
# run (swept back to queued, finished elsewhere, claimed by a later delivery, missing).
BEGIN = _PRELUDE + """
local worker, limit, claim = ARGV[3], tonumber(ARGV[4]), ARGV[5]
local ids, raw = read(6)
local charged, out, seen = {}, {}, {}
for i = 1, #ids do
  local id = ids[i]
  -- The usual case read by one match and rewritten by one concatenation (no job table).
  local state, attempts, rest, started, finished, w, c = string.match(raw[i] or '',
    '^([^|]*)|([^|]*)|([^|]*|[^|]*)|[^|]*|([^|]*)|([^|]*)|([^|]*)|(.*)$')
  if seen[id] then
    out[i] = out[seen[id]]
  elseif state == 'running' and w == worker and c == claim and tonumber(attempts) < limit then
    attempts = tonumber(attempts) + 1
    charged[#charged + 1] = id
    charged[#charged + 1] = 'running|' .. attempts .. '|' .. rest .. '|' .. now .. '|' ..
      started .. '|' .. finished .. '|' .. w .. '|' .. c
    out[i] = {'run', tostring(attempts)}
  elseif state == 'running' and w == worker and c == claim then
    load({id})
    local j = cur[id]
    local last = redis.call('HGET', errors, id)
    if not last or last == '' then
      last = 'began ' .. j.attempts .. ' time(s) and never finished: its worker process ' ..
             'died each time (killed, out of memory?); ROOKHAVEN_JOB_MAX_ATTEMPTS is ' .. limit
    end
    close(id, j, 'failed', last, last)
    out[i] = {'failed'}
  else
    out[i] = {state or 'missing'}
  end
  seen[id] = seen[id] or i
end
-- Charging an attempt is no ledger event: the job stays running.
if #charged > 0 then redis.call('HSET', states, unpack(charged)) end
flush()
return out
"""

# KEYS[10..13] = audits_by_time, audits_by_corpus, log leaves, receipt;
# ARGV[3..6] = the key prefix of the level-0 log tiles, hashes per tile, mode, how many
# results this chunk stored; ARGV[7..] = per job: id, log leaf bytes, its leaf hash (32 bytes).
# The chunk's results (each framing its audit, ADR 0064) are written before this runs, in the
# same MULTI/EXEC but outside Lua (copying ~3 KB a job into a script costs more than the
# rest of it). Mode
# 'receipt': they went in with one MSETNX that also set the receipt key; if the receipt is
# absent the MSETNX refused (some key existed) and nothing is done here ({'refused'}: the
# caller writes key by key and compares). Mode 'checked': the caller has written and
# compared every key.
# Per job: 'done' (job moved to done), 'already-done' or 'stored' (no job record). A result
# gets its log leaf here unless the log has it (a result lost and recomputed, same bytes):
# the log's order is the order in which this script ran, so concurrent workers never fork
# the tree.
COMPLETE = _PRELUDE + """
local by_time, by_corpus, leaves, receipt = KEYS[10], KEYS[11], KEYS[12], KEYS[13]
local tiles, per_tile, mode, stored_count = ARGV[3], tonumber(ARGV[4]), ARGV[5], ARGV[6]
if mode == 'receipt' then
  if redis.call('DEL', receipt) == 0 then return {'refused'} end
end
local ids, leaf_of, hash_of = {}, {}, {}
for at = 7, #ARGV, 3 do
  local id = ARGV[at]
  ids[#ids + 1] = id
  leaf_of[id], hash_of[id] = ARGV[at + 1], ARGV[at + 2]
end
local states_of = redis.call('HMGET', states, unpack(ids))
local in_log = redis.call('HMGET', log_index, unpack(ids))
local new_leaves, new_hashes, new_ids, seen, times = {}, {}, {}, {}, {}
for i = 1, #ids do
  local id = ids[i]
  if not in_log[i] and not seen[id] then
    new_leaves[#new_leaves + 1] = leaf_of[id]
    new_hashes[#new_hashes + 1] = hash_of[id]
    new_ids[#new_ids + 1] = id
  end
  seen[id] = true
  times[#times + 1] = now; times[#times + 1] = id
end
if #new_leaves > 0 then
  local first = redis.call('RPUSH', leaves, unpack(new_leaves)) - #new_leaves
  local index = {}
  for k = 1, #new_ids do
    index[#index + 1] = new_ids[k]; index[#index + 1] = first + k - 1
  end
  redis.call('HSET', log_index, unpack(index))
  -- One APPEND per tile the new hashes fall in (a chunk may cross a tile's end).
  local k = 1
  while k <= #new_hashes do
    local tile = math.floor((first + k - 1) / per_tile)
    local last = math.min(#new_hashes, (tile + 1) * per_tile - first)
    redis.call('APPEND', tiles .. tile, table.concat(new_hashes, '', k, last))
    k = last + 1
  end
end
if tonumber(stored_count) > 0 then
  redis.call('HINCRBY', counters, 'results_stored', stored_count)
end
redis.call('ZADD', by_time, 'NX', unpack(times))
redis.call('ZADD', by_corpus, 'NX', unpack(times))
-- Closing: one match and one concatenation a job, one write per structure for them all.
-- A job running its first attempt (the usual case) is only in the running index and has no
-- error; any other (retried, swept back, failed meanwhile) may be anywhere and have one.
local out, closed, done, other, placed = {}, {}, {}, {}, {}
for i = 1, #ids do
  local id = ids[i]
  local state, attempts, enqueued, created, started, tail = string.match(states_of[i] or '',
    '^([^|]*)|([^|]*)|([^|]*)|([^|]*)|[^|]*|([^|]*)|[^|]*|(.*)$')
  if not state then out[i] = 'stored'
  elseif state == 'done' or placed[id] then out[i] = 'already-done'
  else
    placed[id] = true
    closed[#closed + 1] = id
    closed[#closed + 1] = 'done|' .. attempts .. '|' .. enqueued .. '|' .. created .. '|' ..
      now .. '|' .. started .. '|' .. now .. '|' .. tail
    done[#done + 1] = id
    if state ~= 'running' or attempts ~= '1' then other[#other + 1] = id end
    out[i] = 'done'
  end
end
if #done > 0 then
  redis.call('HSET', states, unpack(closed))
  redis.call('ZREM', running, unpack(done))
  if #other > 0 then
    redis.call('HDEL', errors, unpack(other))  -- a retried job's last error is history now
    redis.call('ZREM', queued, unpack(other))
    redis.call('ZREM', delivered, unpack(other))
  end
  record('done', done, '')
end
return out
"""

# Not a job script. KEYS = a hash; ARGV = field, name: ``name`` appended to the field's
# comma-separated names unless it is there (who asked: store.askers, store.reranks).
NAME = """
local names = redis.call('HGET', KEYS[1], ARGV[1])
if not names then redis.call('HSET', KEYS[1], ARGV[1], ARGV[2]) return 1 end
for name in string.gmatch(names, '[^,]+') do
  if name == ARGV[2] then return 0 end
end
redis.call('HSET', KEYS[1], ARGV[1], names .. ',' .. ARGV[2])
return 1
"""

# The scripts store.rounds calls inside a MULTI/EXEC: every new connection loads them
# (store.preload), as NOSCRIPT inside a transaction comes after the commands before it ran.
TRANSACTED = (COMPLETE,)

# KEYS[10] = violations; ARGV[3..5] = id, result key, what ('result' or 'audit'). Different
# bytes were offered under an existing key: recorded, nothing stored, the job failed.
VIOLATION = _PRELUDE + """
local id, key, what = ARGV[3], ARGV[4], ARGV[5]
redis.call('XADD', KEYS[10], '*', 'key', key, 'job', id, 'what', what, 'at', now)
redis.call('HINCRBY', counters, 'integrity_violations', 1)
load({id})
local j = cur[id]
if j and j.state ~= 'done' and j.state ~= 'failed' then
  close(id, j, 'failed', 'integrity violation',
        'integrity violation: different ' .. what .. ' bytes offered under ' .. key)
end
flush()
return 'violation:' .. what
"""

# KEYS[10] = the job's result key; ARGV[3] = id. Reopens a done job whose result is gone:
# 'reopened' (enqueue it), else its state ('done' with its result, 'queued', ...) or
# 'missing'.
REOPEN = _PRELUDE + """
local id = ARGV[3]
load({id})
local j = cur[id]
if not j then return 'missing' end
if j.state ~= 'done' or redis.call('EXISTS', KEYS[10]) == 1 then return j.state end
j.state, j.updated, j.finished, j.attempts = 'queued', now, '', 0
j.enqueued = j.enqueued + 1
put(id, j)
event('requeued', id, 'result missing')
flush()
return 'reopened'
"""

# ARGV[3..6] = id, error text, '1' if retrying cannot help, max attempts.
# Returns 'failed', 'queued' (left for the sweeper to retry), or the unchanged state.
FAIL = _PRELUDE + """
local id, err = ARGV[3], ARGV[4]
load({id})
local j = cur[id]
if not j then return 'missing' end
if j.state == 'done' or j.state == 'failed' then return j.state end
if ARGV[5] == '1' or j.attempts >= tonumber(ARGV[6]) then
  close(id, j, 'failed', err, err)
  flush()
  return 'failed'
end
redis.call('HSET', errors, id, err)
j.state, j.updated = 'queued', now
put(id, j)
event('retry', id, err)
flush()
return 'queued'
"""

# KEYS[10] = the job's result key; ARGV[3..6] = id, the 'updated' time the sweeper saw, max
# attempts, why it is being swept. Returns 'requeue' (the caller must enqueue it), 'done' or
# 'failed' (closed here), or 'changed' / the state when the job moved on since the sweeper
# looked (nothing done).
REQUEUE = _PRELUDE + """
local id, seen, limit, why = ARGV[3], ARGV[4], tonumber(ARGV[5]), ARGV[6]
load({id})
local j = cur[id]
if not j or j.state == 'done' or j.state == 'failed' then
  redis.call('ZREM', queued, id)
  redis.call('ZREM', running, id)
  redis.call('ZREM', delivered, id)
  return j and j.state or 'missing'
end
if j.updated ~= seen then return 'changed' end
if redis.call('EXISTS', KEYS[10]) == 1 and logged(id) then
  close(id, j, 'done', 'result already stored')
  flush()
  return 'done'
end
if j.attempts >= limit then
  local last = redis.call('HGET', errors, id)
  if not last or last == '' then
    last = 'no result after ' .. j.attempts .. ' attempts (last: ' .. why .. ')'
  end
  close(id, j, 'failed', last, last)
  flush()
  return 'failed'
end
j.state, j.updated, j.enqueued = 'queued', now, j.enqueued + 1
put(id, j)
event('requeued', id, why)
flush()
return 'requeue'
"""

# ARGV[3..4] = worker instance, claim (the worker and its message's token), ARGV[5..] = ids.
# A worker's main process calls it as a message arrives, before the pool starts it: a queued
# job is marked as delivered to that worker in that message, so if the worker dies, or
# drops the message, before START claims it, the sweeper sees it within a heartbeat instead
# of after ROOKHAVEN_SWEEP_AFTER. Only queued jobs are touched (no ledger event: nothing
# changed state). Returns how many were marked.
DELIVER = _PRELUDE + """
local worker, claim = ARGV[3], ARGV[4]
local ids, raw = read(5)
local fields, members, seen = {}, {}, {}
for i = 1, #ids do
  local id = ids[i]
  local head, rest = string.match(raw[i] or '',
    '^(queued|[^|]*|[^|]*|[^|]*)|[^|]*|([^|]*|[^|]*)|')
  if head and not seen[id] then
    seen[id] = true
    fields[#fields + 1] = id
    fields[#fields + 1] = head .. '|' .. now .. '|' .. rest .. '|' .. worker .. '|' .. claim
    members[#members + 1] = now; members[#members + 1] = id
  end
end
if #fields == 0 then return 0 end
redis.call('HSET', states, unpack(fields))
redis.call('ZADD', delivered, unpack(members))
return #members / 2
"""

# Not a job script. KEYS = result; ARGV = its bytes. The careful path, taken for a chunk
# whose MSETNX refused: the key written only if absent, a present one compared, in one
# atomic step. Returns 'violation:result' (nothing written), 'stored' (the result was
# written here) or 'kept' (it was already there, the same bytes).
PUT = """
local old = redis.call('GET', KEYS[1])
if old and old ~= ARGV[1] then return 'violation:result' end
if old then return 'kept' end
redis.call('SET', KEYS[1], ARGV[1])
return 'stored'
"""

# Not a job script. KEYS = a shard's primary-seen record, its hand-back claim; ARGV = the
# replication id of the shard's primary now, the sweep's token, the claim's lifetime (ms).
# 1 when this sweep is to hand the shard's open jobs back: the record names another
# primary and no other sweep is at it (the claim is taken here, in the same step as the
# record is read, so a sweep that read the record before another settled it cannot claim).
CLAIM = """
local seen = redis.call('GET', KEYS[1])
if not seen or seen == ARGV[1] then return 0 end
if not redis.call('SET', KEYS[2], ARGV[2], 'NX', 'PX', ARGV[3]) then return 0 end
return 1
"""

# Not a job script. KEYS as CLAIM; ARGV = the replication id to record, the sweep's token.
# Records the primary and lets go of the claim if this sweep holds it.
SETTLE = """
redis.call('SET', KEYS[1], ARGV[1])
if redis.call('GET', KEYS[2]) == ARGV[2] then redis.call('DEL', KEYS[2]) end
return 1
"""

# Not a job script. KEYS = a shard's hand-back claim; ARGV = the sweep's token. Lets go of
# the claim if this sweep holds it.
RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""
