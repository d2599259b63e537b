-- file_unsettled: write one settlement a stopped process handed over.
-- At most once: only the caller whose LREM took the record off the list
-- writes it (several reconcilers may race for it).
--
-- KEYS[1] the unsettled list   KEYS[2] the target sorted set (retry or dead)
-- KEYS[3] processed, in total  KEYS[4] processed, today
-- KEYS[5] failed, in total     KEYS[6] failed, today
-- KEYS[7] the job's orphanings counter
-- ARGV[1] the record as stored   ARGV[2] "ack", "retry", "dead" or "discard"
-- ARGV[3] the score   ARGV[4] the payload to file   ARGV[5] TTL of a day's counter
-- ARGV[6] dead set: entries scored below this are trimmed   ARGV[7] most entries kept
--
-- Returns 1 if this call wrote it, 0 if it was already gone.
if redis.call("LREM", KEYS[1], 1, ARGV[1]) == 0 then
  return 0
end
redis.call("INCR", KEYS[3])
redis.call("INCR", KEYS[4])
redis.call("EXPIRE", KEYS[4], ARGV[5])
if ARGV[2] ~= "ack" then
  redis.call("INCR", KEYS[5])
  redis.call("INCR", KEYS[6])
  redis.call("EXPIRE", KEYS[6], ARGV[5])
end
if ARGV[2] == "retry" or ARGV[2] == "dead" then
  redis.call("ZADD", KEYS[2], ARGV[3], ARGV[4])
end
if ARGV[2] == "dead" then
  redis.call("ZREMRANGEBYSCORE", KEYS[2], "-inf", "(" .. ARGV[6])
  redis.call("ZREMRANGEBYRANK", KEYS[2], 0, -(tonumber(ARGV[7]) + 1))
end
redis.call("DEL", KEYS[7])
return 1
