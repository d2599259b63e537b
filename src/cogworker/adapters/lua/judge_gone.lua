-- judge_gone: whether a process is gone, judged on its own node (slot {p:P})
-- by that node's clock, the one its beats are stamped with.  The verdict half
-- of a recovery; the requeues of its jobs follow in their own slots
-- (docs/redis-cluster.md, "Recovery of a gone process").
--
-- An old beat alone proves nothing: after this node was frozen, down or
-- restarted, every beat on it looks old.  So the first call that finds the
-- beat older than the threshold only marks the process suspect (the mark is
-- this node's TIME), and the verdict waits a whole threshold from the mark:
-- a live process beats within it, which deletes the mark (beat.lua,
-- pulse.lua).  A missing beat (the hash expired, or a verdict deleted it and
-- its caller crashed before the requeues) is judged the same way, as the
-- oldest beat.  The mark outlives a verdict (its TTL): a caller that crashed
-- after one gets "gone" again at once and finishes the requeues.
--
-- shape: KEYS 4, ARGV 2
-- KEYS[1] the process hash   KEYS[2] its workers hash   KEYS[3] its memory history
-- KEYS[4] its suspect mark (a time, seconds)
-- ARGV[1] heartbeat age (seconds) past which a process is suspect, and the time
--         a suspect mark must stand before the verdict
-- ARGV[2] the suspect mark's TTL, seconds
--
-- Returns 0 alive, 1 not yet (suspect: marked now or earlier), 2 gone (its
-- presence keys deleted now), 3 gone already (no presence keys left).
local threshold = need_number(1)
need_int(2, 1, LONGEST_SECONDS)

local time = redis.call("TIME")
local now = tonumber(time[1]) + tonumber(time[2]) / 1000000
local beat = tonumber(redis.call("HGET", KEYS[1], "beat"))
if beat and now - beat < threshold then
  redis.call("DEL", KEYS[4])
  return 0
end
local mark = tonumber(redis.call("GET", KEYS[4]))
-- A mark older than the beat is a stale one (the beat came after it, and is
-- itself old now): suspect again from now.
if not mark or (beat and beat >= mark) then
  redis.call("SET", KEYS[4], time[1] .. "." .. string.format("%06d", tonumber(time[2])), "EX", ARGV[2])
  return 1
end
if now - mark < threshold then
  return 1
end
if redis.call("DEL", KEYS[1], KEYS[2], KEYS[3]) > 0 then
  return 2
end
return 3
