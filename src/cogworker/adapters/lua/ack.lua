-- ack: a job ran to the end. Take it off the in-progress list and count it.
--
-- KEYS[1] this process's in-progress list
-- KEYS[2] processed, in total      KEYS[3] processed, today
-- KEYS[4] the job's orphanings counter
-- ARGV[1] the payload as fetched
-- ARGV[2] "1" to check ownership first (reliable fetch), "0" (basic fetch)
-- ARGV[3] TTL of a day's counter, seconds
--
-- Returns 1, or 0 if the job was no longer on the list (another process took
-- it back after judging this one gone): then nothing is written.
if ARGV[2] == "1" and redis.call("LREM", KEYS[1], 1, ARGV[1]) == 0 then
  return 0
end
redis.call("INCR", KEYS[2])
redis.call("INCR", KEYS[3])
redis.call("EXPIRE", KEYS[3], ARGV[3])
redis.call("DEL", KEYS[4])
return 1
