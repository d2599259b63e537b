-- requeue: put every job of a process's in-progress list back at the front
-- (right end) of its own queue, oldest-taken nearest the front.
--
-- Nothing here decodes a payload (Redis's cjson refuses some that Python
-- wrote: a lone surrogate, deep nesting).  The caller read the list and
-- passes, per entry it could read, the SHA1 of the entry, its queue and jid;
-- this script stays the one that moves.  An entry on the list it was not
-- told about is parked, never dropped.
--
-- Two uses:
-- * recovery (ARGV[1] = "1"): the process is gone (judge_gone.lua said so
--   first, in the process's own slot).  Each job's orphanings counter goes
--   up; a job orphaned more than ARGV[2] times is parked on its queue's
--   repeat-orphans list instead, to be filed in dead.  Racing reconcilers are
--   harmless: the first one empties the list, the others find it empty.
-- * shutdown (ARGV[1] = "0"): the process's own unfinished jobs.  A job
--   still running (handed back unfinished) counts a hand-back; one handed
--   back more than ARGV[6] times is parked on its queue's repeat-hand-backs
--   list, to be filed in dead.  A job fetched but not started is not counted.
--
-- The caller registers the queues it names in `queues` after this script
-- (see move_due.lua), and in `parts` before it (a reconciler reads the
-- parking lists of the parts).
--
-- The one script still naming keys it isn't given (docs/redis-cluster.md,
-- "The rule"): a process's list holds jobs of several queues until the
-- lists are per queue, so each queue's list is named from ARGV.  Each told
-- entry's counters and parking lists come in KEYS (the caller read its queue
-- and jid).
--
-- shape: KEYS 2 + 4n, ARGV 6 + 4n
-- KEYS[1] the in-progress list
-- KEYS[2] where an entry it wasn't told about is parked: the repeat-orphans
--         list of the empty queue name's part
-- KEYS[3..] per told entry, in ARGV's order: its orphanings counter, its
--           hand-backs counter, its queue's repeat-orphans list, its queue's
--           repeat-hand-backs list (all in its queue's slot)
-- ARGV[1] "1" recovery, "0" shutdown
-- ARGV[2] most orphanings a job may have
-- ARGV[3], ARGV[4] a queue's key: the text before its name, and after
-- ARGV[5] TTL of an orphanings or hand-backs counter, seconds
-- ARGV[6] most hand-backs a job may have
-- ARGV[7..] per entry: its SHA1, its queue, its jid, "1" if it is still
--           running (a hand-back, at shutdown) else "0"
--
-- Returns {requeued, parked}.
local recovery = need_choice(1, "0", "1") == "1"
local most_orphanings = need_int(2, 0, MOST)
need_name(3)
need_name(4)
need_int(5, 1, LONGEST_SECONDS)
local most_handbacks = need_int(6, 0, MOST)
need_groups(7, 4)
if #KEYS ~= 2 + (#ARGV - 6) then
  error({err = "ERR cogworker: " .. #KEYS .. " KEYS, expected four keys per told entry"})
end
local told = {}
for i = 7, #ARGV, 4 do
  need_name(i)
  need_name(i + 1)
  need_name(i + 2)
  need_choice(i + 3, "0", "1")
  told[ARGV[i]] = i
end

-- Counts one more in the counter `key`: whether that is more than `most`.
local function too_many(key, most)
  local count = redis.call("INCR", key)
  redis.call("EXPIRE", key, ARGV[5])
  return count > most
end

-- The keys of the entry told at ARGV[i]: its orphanings counter, its
-- hand-backs counter, its queue's repeat-orphans and repeat-hand-backs lists.
local function entry_keys(i)
  local k = 2 + (i - 7)
  return KEYS[k + 1], KEYS[k + 2], KEYS[k + 3], KEYS[k + 4]
end

local requeued, parked = 0, 0
for _, raw in ipairs(redis.call("LRANGE", KEYS[1], 0, -1)) do
  local i = told[redis.sha1hex(raw)]
  local park_on = i == nil and KEYS[2] or nil
  if i and recovery then
    local orphanings, _, repeat_orphans = entry_keys(i)
    park_on = too_many(orphanings, most_orphanings) and repeat_orphans or nil
  elseif i and ARGV[i + 3] == "1" then
    local _, handbacks, _, repeat_handbacks = entry_keys(i)
    park_on = too_many(handbacks, most_handbacks) and repeat_handbacks or nil
  end
  if park_on then
    redis.call("RPUSH", park_on, raw)
    parked = parked + 1
  else
    redis.call("RPUSH", ARGV[3] .. ARGV[i + 1] .. ARGV[4], raw)
    requeued = requeued + 1
  end
end
redis.call("DEL", KEYS[1])
return {requeued, parked}
