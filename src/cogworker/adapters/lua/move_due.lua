-- move_due: a scheduled or retry entry whose time has come goes onto its
-- queue. At most once, however many pollers race for it: only the caller
-- whose ZREM took it out pushes it.
--
-- shape: KEYS 3, ARGV 3
-- KEYS[1] the sorted set   KEYS[2] the queue   KEYS[3] the queue registry set
-- ARGV[1] the entry as stored   ARGV[2] the payload to push   ARGV[3] the queue name
--
-- Returns 1 if this call moved it, 0 if someone else did first.
need_text(1)
need_text(2)
need_name(3)

if redis.call("ZREM", KEYS[1], ARGV[1]) == 0 then
  return 0
end
redis.call("LPUSH", KEYS[2], ARGV[2])
redis.call("SADD", KEYS[3], ARGV[3])
return 1
