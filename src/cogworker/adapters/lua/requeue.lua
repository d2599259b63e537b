-- requeue: put every job of a process's in-progress list back at the front
-- (right end) of its own queue, oldest-taken nearest the front.
--
-- Nothing here decodes a payload (Redis's cjson refuses some that Python
-- wrote: a lone surrogate, deep nesting).  The caller read the list and
-- passes, per entry it could read, the SHA1 of the entry, its queue and jid;
-- this script stays the one that judges and moves.  An entry on the list it
-- was not told about is parked, never dropped.
--
-- Two uses:
-- * recovery (ARGV[1] = "1"): the process is gone. Only if its heartbeat is
--   older than ARGV[2] seconds by Redis's own clock (so clock skew between
--   hosts can't make a live process look dead), which also makes racing
--   reconcilers harmless: the first one empties the list and removes the
--   process, the others find it gone. Each job's orphanings counter goes up;
--   a job orphaned more than ARGV[3] times is parked on the repeat-orphans
--   list instead, to be filed in dead. The process's presence keys go too.
-- * shutdown (ARGV[1] = "0"): the process's own unfinished jobs.  A job
--   still running (handed back unfinished) counts a hand-back; one handed
--   back more than ARGV[10] times is parked on the repeat-hand-backs list, to
--   be filed in dead.  A job fetched but not started is not counted.
--
-- The caller registers the queues it names after this script (see
-- move_due.lua).
--
-- The one script still naming keys it isn't given (docs/redis-cluster.md,
-- "The rule"): a process's list holds jobs of several queues until the
-- lists are per queue, so each queue's list is named from ARGV.  Each told
-- entry's counters come in KEYS (the caller read its queue and jid).
--
-- shape: KEYS 8 + 2n, ARGV 9 + 4n
-- KEYS[1] the in-progress list     KEYS[2] the repeat-orphans list
-- KEYS[3] the processes set        KEYS[4] the process hash
-- KEYS[5] its workers hash         KEYS[6] its memory history
-- KEYS[7] the beats hash (see beat.lua)
-- KEYS[8] the repeat-hand-backs list
-- KEYS[9..] per told entry, in ARGV's order: its orphanings counter, then its
--           hand-backs counter (in its queue's slot)
-- ARGV[1] "1" recovery, "0" shutdown
-- ARGV[2] heartbeat age (seconds) past which a process is gone
-- ARGV[3] most orphanings a job may have     ARGV[4] the process's identity
-- ARGV[5], ARGV[6] a queue's key: the text before its name, and after
-- ARGV[7] TTL of an orphanings or hand-backs counter, seconds
-- ARGV[8] the beat gap (seconds) that means nobody could beat (see beat.lua)
-- ARGV[9] most hand-backs a job may have
-- ARGV[10..] per entry: its SHA1, its queue, its jid, "1" if it is still
--            running (a hand-back, at shutdown) else "0"
--
-- Returns {requeued, parked}, or {-1, 0} if there is nothing to do: the process
-- is alive after all, or (recovery) another reconciler has already done it.
local recovery = need_choice(1, "0", "1") == "1"
local threshold = need_number(2)
local most_orphanings = need_int(3, 0, MOST)
need_name(4)
need_name(5)
need_name(6)
need_int(7, 1, LONGEST_SECONDS)
local gap = need_number(8)
local most_handbacks = need_int(9, 0, MOST)
need_groups(10, 4)
if #KEYS ~= 8 + (#ARGV - 9) / 2 then
  error({err = "ERR cogworker: " .. #KEYS .. " KEYS, expected two counters per told entry"})
end
local told = {}
for i = 10, #ARGV, 4 do
  need_name(i)
  need_name(i + 1)
  need_name(i + 2)
  need_choice(i + 3, "0", "1")
  told[ARGV[i]] = i
end

if recovery then
  if redis.call("SISMEMBER", KEYS[3], ARGV[4]) == 0 and redis.call("EXISTS", KEYS[1]) == 0 then
    return {-1, 0}
  end
  local time = redis.call("TIME")
  local now = tonumber(time[1]) + tonumber(time[2]) / 1000000
  local beat = tonumber(redis.call("HGET", KEYS[4], "beat"))
  if beat and now - beat < threshold then
    return {-1, 0}
  end
  -- An old heartbeat proves a process gone only while the others keep
  -- beating: not when nobody has beaten for a while (this call waited out a
  -- frozen Redis), nor within a threshold of beats resuming after such a gap.
  local beats = redis.call("HMGET", KEYS[7], "last", "resumed")
  local last, resumed = tonumber(beats[1]), tonumber(beats[2])
  if not last or now - last > gap or (resumed and now - resumed < threshold) then
    return {-1, 0}
  end
end

-- Counts one more in the counter `key`: whether that is more than `most`.
local function too_many(key, most)
  local count = redis.call("INCR", key)
  redis.call("EXPIRE", key, ARGV[7])
  return count > most
end

-- The counters of the entry told at ARGV[i]: its orphanings', its hand-backs'.
local function counters(i)
  local k = 8 + (i - 10) / 2
  return KEYS[k + 1], KEYS[k + 2]
end

local requeued, parked = 0, 0
for _, raw in ipairs(redis.call("LRANGE", KEYS[1], 0, -1)) do
  local i = told[redis.sha1hex(raw)]
  local park_on = i == nil and KEYS[2] or nil
  if i and recovery then
    local orphanings = counters(i)
    park_on = too_many(orphanings, most_orphanings) and KEYS[2] or nil
  elseif i and ARGV[i + 3] == "1" then
    local _, handbacks = counters(i)
    park_on = too_many(handbacks, most_handbacks) and KEYS[8] or nil
  end
  if park_on then
    redis.call("RPUSH", park_on, raw)
    parked = parked + 1
  else
    redis.call("RPUSH", ARGV[5] .. ARGV[i + 1] .. ARGV[6], raw)
    requeued = requeued + 1
  end
end
redis.call("DEL", KEYS[1])
if recovery then
  redis.call("DEL", KEYS[4], KEYS[5], KEYS[6])
  redis.call("SREM", KEYS[3], ARGV[4])
end
return {requeued, parked}
