-- push: put jobs onto one queue and register the queue's name.
--
-- KEYS[1] the queue   KEYS[2] the queue registry set
-- ARGV[1] the queue name   ARGV[2..] payloads, pushed in order
redis.call("SADD", KEYS[2], ARGV[1])
return redis.call("LPUSH", KEYS[1], unpack(ARGV, 2))
