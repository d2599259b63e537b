-- release_lock: let go of a lock, only if it is still held by the given jid
-- (a stale holder can't release another job's lock).
--
-- shape: KEYS 1, ARGV 1
-- KEYS[1] the lock   ARGV[1] the jid that took it
--
-- Returns 1 if released, 0 if it was gone or someone else's.
need_text(1)

if redis.call("GET", KEYS[1]) == ARGV[1] then
  return redis.call("DEL", KEYS[1])
end
return 0
