-- push: put jobs onto one queue and register the queue's name.
--
-- shape: KEYS 2, ARGV 1 + 1n
-- KEYS[1] the queue   KEYS[2] the queue registry set
-- ARGV[1] the queue name   ARGV[2..] payloads, pushed in order
need_name(1)
if #ARGV < 2 then
  refuse(2, "a payload")
end

redis.call("SADD", KEYS[2], ARGV[1])
return redis.call("LPUSH", KEYS[1], unpack(ARGV, 2))
