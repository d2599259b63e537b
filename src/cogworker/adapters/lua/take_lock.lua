-- take_lock: take a lock for a jid if it is free, or take it again if that
-- jid already holds it (a run recovered after its process died finds its
-- own earlier run's lock); either way its TTL starts again.
--
-- KEYS[1] the lock   ARGV[1] the jid   ARGV[2] its TTL in milliseconds (a whole number, 1 to 2^52)
--
-- Returns 1 if the jid holds the lock now, 0 if another jid does.
local ttl = tonumber(ARGV[2])
if not ttl or ttl < 1 or ttl > 2^52 or ttl ~= math.floor(ttl) then
  return redis.error_reply("take_lock: the TTL must be a whole number of milliseconds from 1 to 2^52")
end
local holder = redis.call("GET", KEYS[1])
if holder and holder ~= ARGV[1] then
  return 0
end
redis.call("SET", KEYS[1], ARGV[1], "PX", ttl)
return 1
