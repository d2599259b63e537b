-- push: put jobs onto one queue.  The caller registers the queue (an SADD of
-- the queue registry after this script, when its client hasn't lately): the
-- registry is a global key, in another slot than the queue on Redis Cluster.
--
-- shape: KEYS 1, ARGV 1 + 1n
-- KEYS[1] the queue
-- ARGV[1], ARGV[2], ... the payloads, pushed in order
if #ARGV < 1 then
  refuse(1, "a payload")
end

return redis.call("LPUSH", KEYS[1], unpack(ARGV))
