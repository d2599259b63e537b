-- beat: one heartbeat. Registers the process, stamps it with Redis's own
-- clock (the time recovery compares against), replaces what its threads run
-- now, and hands back (and clears) the signals waiting for it.
--
-- KEYS[1] the processes set   KEYS[2] the process hash
-- KEYS[3] its workers hash    KEYS[4] its signal list
-- ARGV[1] identity   ARGV[2] TTL of the process and workers keys, seconds
-- ARGV[3] JSON object: thread name -> JSON of the job it runs
-- ARGV[4..] field, value pairs for the process hash
local now = redis.call("TIME")
local beat = now[1] .. "." .. string.format("%06d", tonumber(now[2]))
redis.call("HSET", KEYS[2], "beat", beat, unpack(ARGV, 4))
redis.call("EXPIRE", KEYS[2], ARGV[2])
redis.call("SADD", KEYS[1], ARGV[1])
redis.call("DEL", KEYS[3])
for thread, work in pairs(cjson.decode(ARGV[3])) do
  redis.call("HSET", KEYS[3], thread, work)
end
redis.call("EXPIRE", KEYS[3], ARGV[2])
local signals = redis.call("LRANGE", KEYS[4], 0, -1)
redis.call("DEL", KEYS[4])
return signals
