-- limit_renew: a process's heartbeat renews the concurrency places its
-- running jobs hold under one limit key (see limit_take.lua), each only
-- while it hasn't run out: a place that ran out may be someone else's now.
--
-- shape: KEYS 1, ARGV 1 + 1n
-- KEYS[1] the limit's key (holders)
-- ARGV[1] how long a place lasts from now, milliseconds   ARGV[2...] the jids
--
-- Returns how many places were renewed.
need_int(1, 1, LONGEST_MS)
for i = 2, #ARGV do
  need_name(i)
end

local time = redis.call("TIME")
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local renewed = 0
for i = 2, #ARGV do
  local until_ms = redis.call("ZSCORE", KEYS[1], ARGV[i])
  if until_ms and tonumber(until_ms) > now then
    redis.call("ZADD", KEYS[1], now + tonumber(ARGV[1]), ARGV[i])
    renewed = renewed + 1
  end
end
if renewed > 0 then
  redis.call("PEXPIRE", KEYS[1], ARGV[1])
end
return renewed
