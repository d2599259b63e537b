-- bury: move one entry from a sorted set or a list into dead, replaced by
-- the payload given (an unparseable entry wrapped, a repeat orphan with its
-- error). At most once: only the caller that removed it files it.
--
-- shape: KEYS 3 + 2n, ARGV 8
-- uses: _results
-- KEYS[1] where it is now   KEYS[2] the dead set
-- KEYS[3] the job's result (see _results.lua; any unused name when it keeps none)
-- KEYS[4], KEYS[5] (optional) the job's orphanings and hand-backs counters,
--         deleted with the move
-- ARGV[1] "zset" or "list", or "taken": already taken off by the caller (basic fetch)
-- ARGV[2] the entry as stored   ARGV[3] the score
-- ARGV[4] the payload to file   ARGV[5] trim below this score   ARGV[6] most entries kept
-- ARGV[7] its result's record   ARGV[8] its TTL, or "0" (it keeps none)
--
-- Returns 1 if this call filed it, 0 if it was already gone.
need_choice(1, "zset", "list", "taken")
need_text(2)
need_number(3)
need_text(4)
need_number(5)
need_int(6, 1, MOST)
need_result(7)

local removed = 1
if ARGV[1] == "zset" then
  removed = redis.call("ZREM", KEYS[1], ARGV[2])
elseif ARGV[1] == "list" then
  removed = redis.call("LREM", KEYS[1], 1, ARGV[2])
end
if removed == 0 then
  return 0
end
redis.call("ZADD", KEYS[2], ARGV[3], ARGV[4])
redis.call("ZREMRANGEBYSCORE", KEYS[2], "-inf", "(" .. ARGV[5])
redis.call("ZREMRANGEBYRANK", KEYS[2], 0, -(tonumber(ARGV[6]) + 1))
if KEYS[4] then
  redis.call("DEL", unpack(KEYS, 4))
end
keep_result(KEYS[3], ARGV[7], ARGV[8])
return 1
