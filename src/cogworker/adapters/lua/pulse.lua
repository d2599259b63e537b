-- pulse: a worker's liveness, stamped by its companion process (see
-- app/worker/pulse.py) when the worker's own heartbeat is late: a job in C
-- code may keep its thread off the GIL. Only the "beat" stamp and the
-- presence keys' TTL, as beat.lua writes them: what threads run, the memory
-- history and the signals stay the heartbeat's. A process that is not
-- registered (not yet, or no longer: a clean stop or a recovery removed
-- it) is left alone, so a pulse never brings a process back.
--
-- shape: KEYS 4, ARGV 4
-- KEYS[1] the processes set   KEYS[2] the process hash
-- KEYS[3] its workers hash    KEYS[4] the beats hash (see beat.lua)
-- ARGV[1] identity   ARGV[2] TTL of the process and workers keys, seconds
-- ARGV[3] the beat gap, seconds (see beat.lua)
-- ARGV[4] a beat younger than this (seconds) is the heartbeat's own, on time
--
-- Returns 1 if it stamped the process, 0 if the process is not registered,
-- -1 if its own beat is recent (nothing written).
need_name(1)
need_int(2, 1, LONGEST_SECONDS)
need_number(3)
need_number(4)
if redis.call("SISMEMBER", KEYS[1], ARGV[1]) == 0 then
  return 0
end
local now = redis.call("TIME")
local beat = now[1] .. "." .. string.format("%06d", tonumber(now[2]))
local previous = tonumber(redis.call("HGET", KEYS[2], "beat"))
if previous and tonumber(beat) - previous < tonumber(ARGV[4]) then
  return -1
end
local last = tonumber(redis.call("HGET", KEYS[4], "last"))
if not last or tonumber(beat) - last > tonumber(ARGV[3]) then
  redis.call("HSET", KEYS[4], "resumed", beat)
end
redis.call("HSET", KEYS[4], "last", beat)
redis.call("HSET", KEYS[2], "beat", beat)
redis.call("EXPIRE", KEYS[2], ARGV[2])
redis.call("EXPIRE", KEYS[3], ARGV[2])
return 1
