-- pulse: a worker's liveness, stamped by its companion process (see
-- app/worker/pulse.py) when the worker's own heartbeat is late: a job in C
-- code may keep its thread off the GIL. Only the "beat" stamp, the suspect
-- mark's deletion and the presence keys' TTL, as beat.lua writes them: what
-- threads run, the memory history and the signals stay the heartbeat's. A
-- process whose hash is gone (not written yet, or no longer: a clean stop or
-- a recovery's verdict removed it) is left alone, so a pulse never brings a
-- process back.
--
-- shape: KEYS 3, ARGV 2
-- KEYS[1] the process hash   KEYS[2] its workers hash
-- KEYS[3] its suspect mark (see judge_gone.lua)
-- ARGV[1] TTL of the process and workers keys, seconds
-- ARGV[2] a beat younger than this (seconds) is the heartbeat's own, on time
--
-- Returns 1 if it stamped the process, 0 if its hash is gone, -1 if its own
-- beat is recent (nothing written).
need_int(1, 1, LONGEST_SECONDS)
need_number(2)
if redis.call("EXISTS", KEYS[1]) == 0 then
  return 0
end
local now = redis.call("TIME")
local beat = now[1] .. "." .. string.format("%06d", tonumber(now[2]))
local previous = tonumber(redis.call("HGET", KEYS[1], "beat"))
if previous and tonumber(beat) - previous < tonumber(ARGV[2]) then
  return -1
end
redis.call("HSET", KEYS[1], "beat", beat)
redis.call("DEL", KEYS[3])
redis.call("EXPIRE", KEYS[1], ARGV[1])
redis.call("EXPIRE", KEYS[2], ARGV[1])
return 1
