-- take_lock: take a lock for a jid if it is free, or take it again if that
-- jid already holds it (a run recovered after its process died finds its
-- own earlier run's lock); either way its TTL starts again.
--
-- shape: KEYS 1, ARGV 2
-- KEYS[1] the lock   ARGV[1] the jid   ARGV[2] its TTL in milliseconds
--
-- Returns 1 if the jid holds the lock now, 0 if another jid does.
need_name(1)
need_int(2, 1, LONGEST_MS)

local holder = redis.call("GET", KEYS[1])
if holder and holder ~= ARGV[1] then
  return 0
end
redis.call("SET", KEYS[1], ARGV[1], "PX", ARGV[2])
return 1
