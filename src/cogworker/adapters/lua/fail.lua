-- fail: a job's attempt failed. File its new payload in retry or dead (or
-- nowhere, for a discard), take it off the in-progress list, count it.
--
-- KEYS[1] this process's in-progress list
-- KEYS[2] the target sorted set (retry or dead; unused for a discard)
-- KEYS[3] processed, in total      KEYS[4] processed, today
-- KEYS[5] failed, in total         KEYS[6] failed, today
-- KEYS[7] the job's orphanings counter
-- ARGV[1] the payload as fetched
-- ARGV[2] "1" to check ownership first (reliable fetch), "0" (basic fetch)
-- ARGV[3] TTL of a day's counter, seconds
-- ARGV[4] "retry", "dead" or "discard"
-- ARGV[5] the score (when to retry, or when it died)
-- ARGV[6] the payload to file
-- ARGV[7] dead set: entries scored below this are trimmed
-- ARGV[8] dead set: most entries kept
--
-- Returns 1, or 0 if the job was no longer on the list: then nothing is written.
if ARGV[2] == "1" and redis.call("LREM", KEYS[1], 1, ARGV[1]) == 0 then
  return 0
end
if ARGV[4] ~= "discard" then
  redis.call("ZADD", KEYS[2], ARGV[5], ARGV[6])
end
if ARGV[4] == "dead" then
  redis.call("ZREMRANGEBYSCORE", KEYS[2], "-inf", "(" .. ARGV[7])
  redis.call("ZREMRANGEBYRANK", KEYS[2], 0, -(tonumber(ARGV[8]) + 1))
end
for i = 3, 6 do
  redis.call("INCR", KEYS[i])
end
redis.call("EXPIRE", KEYS[4], ARGV[3])
redis.call("EXPIRE", KEYS[6], ARGV[3])
redis.call("DEL", KEYS[7])
return 1
