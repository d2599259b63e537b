-- move_due: a scheduled or retry entry whose time has come goes onto its
-- queue. At most once, however many pollers race for it: only the caller
-- whose ZREM took it out pushes it.  The caller registers the queue (an SADD
-- of the queue registry right after this script): the registry is a global
-- key, in another slot than the queue on Redis Cluster.
--
-- shape: KEYS 2, ARGV 2
-- KEYS[1] the sorted set   KEYS[2] the queue
-- ARGV[1] the entry as stored   ARGV[2] the payload to push
--
-- Returns 1 if this call moved it, 0 if someone else did first.
need_text(1)
need_text(2)

if redis.call("ZREM", KEYS[1], ARGV[1]) == 0 then
  return 0
end
redis.call("LPUSH", KEYS[2], ARGV[2])
return 1
