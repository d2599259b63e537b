-- cancel: take a waiting job (on a queue, scheduled, or waiting to retry) off
-- where it waits and end it as cancelled, in one step, and only if it was
-- still there: a job a worker fetched meanwhile is left alone (it is then
-- running, and is told to stop through its process's signal list).
-- Its locks are owner-checked: released only while they still name its jid.
--
-- shape: KEYS 10, ARGV 13
-- uses: _results, _located
-- KEYS[1] where it waits (a queue's list, or the schedule or retry sorted set)
-- KEYS[2] its queue's cancelled counter in total   KEYS[3] the same, today
-- KEYS[4] its attempts list   KEYS[5] its status hash
-- KEYS[6] its unique lock   KEYS[7] its periodic running lock (any unused name for none)
-- ARGV[1] "list" or "zset"   ARGV[2] the entry as stored   ARGV[3] its jid
-- ARGV[4] TTL of a day's counter
-- ARGV[5] the attempt record   ARGV[6] attempts kept   ARGV[7] their TTL
-- ARGV[8] the new status, or "" (not tracked)   ARGV[9] status TTL   ARGV[10] now
-- KEYS[8] its queue's batch events (any unused name when ARGV[11] is "")
-- ARGV[11] its batch's event (adapters/batch_events.py), or "" (no batch)
-- KEYS[9] its result (see _results.lua; any unused name when it keeps none)
-- ARGV[12] its result's record   ARGV[13] its TTL, or "0" (it keeps none)
-- KEYS[10] its queue's jid index of the sets (see _located.lua)
--
-- Returns 1, or 0 if the entry was no longer there.
local list = need_choice(1, "list", "zset") == "list"
need_name(2)
need_name(3)
need_int(4, 0, LONGEST_SECONDS)
need_name(5)
need_int(6, 1, MOST)
need_int(7, 0, LONGEST_SECONDS)
need_text(8)
need_int(9, 0, LONGEST_SECONDS)
need_number(10)
need_text(11)
need_result(12)

local gone
if list then
  gone = redis.call("LREM", KEYS[1], -1, ARGV[2])
else
  gone = redis.call("ZREM", KEYS[1], ARGV[2])
  if gone == 1 then
    located_drop(KEYS[10], ARGV[3], set_name(KEYS[1]))
  end
end
if gone == 0 then
  return 0
end
redis.call("INCR", KEYS[2])
if redis.call("INCR", KEYS[3]) == 1 then
  redis.call("EXPIRE", KEYS[3], ARGV[4])
end
redis.call("LPUSH", KEYS[4], ARGV[5])
redis.call("LTRIM", KEYS[4], 0, tonumber(ARGV[6]) - 1)
redis.call("EXPIRE", KEYS[4], ARGV[7])
-- pcall: a payload may name any key as its lock; one of another type isn't its lock.
for _, lock in ipairs({KEYS[6], KEYS[7]}) do
  if redis.pcall("GET", lock) == ARGV[3] then
    redis.call("DEL", lock)
  end
end
if ARGV[8] ~= "" then
  redis.call("HSET", KEYS[5], "status", ARGV[8], "update_time", ARGV[10])
  redis.call("EXPIRE", KEYS[5], ARGV[9])
end
if ARGV[11] ~= "" then
  redis.call("RPUSH", KEYS[8], ARGV[11])
end
keep_result(KEYS[9], ARGV[12], ARGV[13])
return 1
