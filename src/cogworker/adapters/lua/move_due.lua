-- move_due: a scheduled or retry entry whose time has come goes onto its
-- queue. At most once, however many pollers race for it: only the caller
-- whose ZREM took it out pushes it.  The caller registers the queue (an SADD
-- of the queue registry right after this script): the registry is a global
-- key, in another slot than the queue on Redis Cluster.
--
-- shape: KEYS 3, ARGV 3
-- uses: _located
-- KEYS[1] the sorted set   KEYS[2] the queue
-- KEYS[3] the queue's jid index of the sets (see _located.lua)
-- ARGV[1] the entry as stored   ARGV[2] the payload to push   ARGV[3] its jid
--
-- Returns 1 if this call moved it, 0 if someone else did first.
need_text(1)
need_text(2)
need_text(3)

if redis.call("ZREM", KEYS[1], ARGV[1]) == 0 then
  return 0
end
located_drop(KEYS[3], ARGV[3], set_name(KEYS[1]))
redis.call("LPUSH", KEYS[2], ARGV[2])
return 1
