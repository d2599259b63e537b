-- requeue: put every job of one of a process's in-progress lists (one queue's)
-- back at the front (right end) of that queue, oldest-taken nearest the front.
--
-- Nothing here decodes a payload (Redis's cjson refuses some that Python
-- wrote: a lone surrogate, deep nesting).  The caller read the list and
-- passes, per entry it could read, the SHA1 of the entry and its jid; this
-- script stays the one that moves.  An entry on the list it was not told
-- about is parked on the queue's repeat-orphans list, never dropped.
--
-- Two uses:
-- * recovery (ARGV[1] = "1"): the process is gone (judge_gone.lua said so
--   first, in the process's own slot).  Each job's orphanings counter goes
--   up; a job orphaned more than ARGV[2] times is parked on the queue's
--   repeat-orphans list instead, to be filed in dead.  Racing reconcilers are
--   harmless: the first one empties the list, the others find it empty.
-- * shutdown (ARGV[1] = "0"): the process's own unfinished jobs.  A job
--   still running (handed back unfinished) counts a hand-back; one handed
--   back more than ARGV[4] times is parked on the queue's repeat-hand-backs
--   list, to be filed in dead.  A job fetched but not started is not counted.
--
-- Every key is in KEYS, all in the queue's slot: a job goes back to the queue
-- whose list held it (the queue it was fetched from), and its counters are
-- that queue's.  The caller registers the queue in `queues` after this script
-- (see move_due.lua), and in `parts` before it (a reconciler reads the
-- parking lists of the parts).
--
-- shape: KEYS 4 + 2n, ARGV 4 + 3n
-- KEYS[1] the in-progress list   KEYS[2] the queue
-- KEYS[3] the queue's repeat-orphans list (also where an entry it wasn't told
--         about is parked)   KEYS[4] the queue's repeat-hand-backs list
-- KEYS[5..] per told entry, in ARGV's order: its orphanings counter, its
--           hand-backs counter
-- ARGV[1] "1" recovery, "0" shutdown
-- ARGV[2] most orphanings a job may have
-- ARGV[3] TTL of an orphanings or hand-backs counter, seconds
-- ARGV[4] most hand-backs a job may have
-- ARGV[5..] per entry: its SHA1, its jid, "1" if it is still running (a
--           hand-back, at shutdown) else "0"
--
-- Returns {requeued, parked}.
local recovery = need_choice(1, "0", "1") == "1"
local most_orphanings = need_int(2, 0, MOST)
need_int(3, 1, LONGEST_SECONDS)
local most_handbacks = need_int(4, 0, MOST)
need_groups(5, 3)
if #KEYS ~= 4 + 2 * (#ARGV - 4) / 3 then
  error({err = "ERR cogworker: " .. #KEYS .. " KEYS, expected two keys per told entry"})
end
local told = {}
for i = 5, #ARGV, 3 do
  need_name(i)
  need_name(i + 1)
  need_choice(i + 2, "0", "1")
  told[ARGV[i]] = i
end

-- Counts one more in the counter `key`: whether that is more than `most`.
local function too_many(key, most)
  local count = redis.call("INCR", key)
  redis.call("EXPIRE", key, ARGV[3])
  return count > most
end

-- The counters of the entry told at ARGV[i]: its orphanings, its hand-backs.
local function counters(i)
  local k = 4 + 2 * (i - 5) / 3
  return KEYS[k + 1], KEYS[k + 2]
end

local requeued, parked = 0, 0
for _, raw in ipairs(redis.call("LRANGE", KEYS[1], 0, -1)) do
  local i = told[redis.sha1hex(raw)]
  local park_on = i == nil and KEYS[3] or nil
  if i and recovery then
    local orphanings = counters(i)
    park_on = too_many(orphanings, most_orphanings) and KEYS[3] or nil
  elseif i and ARGV[i + 2] == "1" then
    local _, handbacks = counters(i)
    park_on = too_many(handbacks, most_handbacks) and KEYS[4] or nil
  end
  if park_on then
    redis.call("RPUSH", park_on, raw)
    parked = parked + 1
  else
    redis.call("RPUSH", KEYS[2], raw)
    requeued = requeued + 1
  end
end
redis.call("DEL", KEYS[1])
return {requeued, parked}
