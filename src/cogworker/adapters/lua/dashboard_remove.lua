-- dashboard_remove: the dashboard's delete, kill and clear. Takes entries off
-- a sorted set or a queue and, for each entry this call removed, lets go of
-- the locks its job held (its unique lock, a periodic run's running lock), in
-- the same step: a job removed for good must not keep blocking its
-- duplicates. Locks are owner-checked: released only while they still name
-- the entry's jid. An entry someone else moved first is left alone.  A
-- cleared queue is unregistered by the caller, after this script (the
-- registry is a global key, in another slot than the queue on Redis Cluster).
-- A batch member removed for good ends there: its batch event (dead for a
-- kill, discard for a delete) is appended in the same step, and so is the
-- result of a job keeping one (killed or discarded), for its waiter.
--
-- shape: KEYS 3 + 4n, ARGV 5 + 5n
-- uses: _results, _located
-- KEYS[1] where the entries are (a sorted set, or a queue's list)
-- KEYS[2] "kill": the dead set; else unused
-- KEYS[3] a sorted set's queue's jid index of the sets (see _located.lua; the
--         dead set a kill files in is that queue's too); else unused
-- KEYS[4i] .. KEYS[4i+3] for the i-th entry (from 1): its unique lock, its
--         running lock (any unused name for a lock it doesn't hold), its queue's
--         batch events (any unused name when it has no event), and its result
--         (see _results.lua; any unused name when it keeps none)
-- ARGV[1] "zset" or "list"   ARGV[2] "delete" or "kill" (a sorted set's only)
-- ARGV[3] kill: the dead score; else unused
-- ARGV[4] kill: trim dead entries scored below this   ARGV[5] kill: most kept
-- ARGV[5i+1] .. ARGV[5i+5] for the i-th entry: the entry as stored, its jid, its
--         batch event (adapters/batch_events.py) or "", its result record and
--         the record's TTL ("0": it keeps none)
--
-- Returns a list: 1 where this call removed the entry, 0 where it was gone.
local list = need_choice(1, "zset", "list") == "list"
local kill = need_choice(2, "delete", "kill") == "kill"
need_text(3)
if kill then
  need_number(3)
  need_number(4)
  need_int(5, 0, MOST)
end
need_groups(6, 5)
for i = 9, #ARGV, 5 do
  need_result(i)
end
if (list and kill) or (#KEYS - 3) / 4 ~= (#ARGV - 5) / 5 then
  return redis.error_reply("cogworker: dashboard_remove: a list can't be killed from, "
    .. "and each entry needs its two lock keys, its events key and its result key")
end

-- pcall: a payload may name any key as its lock; one of another type isn't its lock.
local function release(lock, jid)
  if jid ~= "" and redis.pcall("GET", lock) == jid then
    redis.call("DEL", lock)
  end
end

local removed = {}
for i = 1, (#ARGV - 5) / 5 do
  local entry, jid, event = ARGV[5 * i + 1], ARGV[5 * i + 2], ARGV[5 * i + 3]
  local at = 4 * i
  local gone
  if list then
    -- From the tail: the dashboard's searches and clears look there first.
    gone = redis.call("LREM", KEYS[1], -1, entry)
  else
    gone = redis.call("ZREM", KEYS[1], entry)
  end
  if gone > 0 then
    release(KEYS[at], jid)
    release(KEYS[at + 1], jid)
    -- An entry the dashboard couldn't read as a job comes without its jid; one
    -- filed in dead as unreadable still names the jid it was filed under.
    local noted = (list or jid ~= "") and jid or jid_of(entry)
    if not list then
      located_drop(KEYS[3], noted, set_name(KEYS[1]))
    end
    if kill then
      redis.call("ZADD", KEYS[2], ARGV[3], entry)
      located_add(KEYS[3], noted, "dead", ARGV[3])
    end
    if event ~= "" then
      redis.call("RPUSH", KEYS[at + 2], event)
    end
    keep_result(KEYS[at + 3], ARGV[5 * i + 4], ARGV[5 * i + 5])
  end
  removed[i] = gone > 0 and 1 or 0
end
if kill then
  trim_dead(KEYS[2], KEYS[3], ARGV[4], ARGV[5])
end
return removed
