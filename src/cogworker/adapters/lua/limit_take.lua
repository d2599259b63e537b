-- limit_take: a job about to run takes its place under a per-key limit, or
-- is refused (domain/key_limits.py).  Every key is in the job's queue's slot.
--
-- A concurrency limit's key is a sorted set of the jids holding a place,
-- scored by when the place runs out (Redis's clock, milliseconds): the
-- holder's heartbeat renews it (limit_renew), its settlement lets it go
-- (settle), and a place whose process died runs out by itself.  A jid
-- already holding a place (a run recovered after its process died) takes it
-- again without counting twice.
--
-- A rate limit's key is a sorted set of the starts within the last window,
-- one member per start (jid and time), scored by the start's time.
--
-- The waiting set remembers the jobs refused lately (scored by the refusal's
-- time), for the dashboard: a job leaves it when it takes a place, or when
-- its last refusal is older than the horizon.
--
-- shape: KEYS 2, ARGV 5
-- KEYS[1] the limit's key (holders or starts)   KEYS[2] its waiting set
-- ARGV[1] "concurrency" or "rate"   ARGV[2] the jid   ARGV[3] max
-- ARGV[4] concurrency: how long a place lasts unrenewed; rate: the window
--         (milliseconds)
-- ARGV[5] the waiting set's horizon, milliseconds
--
-- Returns {1, 0} if the job took a place, {0, ms} if refused: ms is how long
-- until a rate's window frees a place (0 for a concurrency limit: unknown).
need_choice(1, "concurrency", "rate")
need_name(2)
need_int(3, 1, MOST)
need_int(4, 1, LONGEST_MS)
need_int(5, 1, LONGEST_MS)

local time = redis.call("TIME")
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local span, jid = tonumber(ARGV[4]), ARGV[2]

local function taken(member, score)
  redis.call("ZADD", KEYS[1], score, member)
  redis.call("PEXPIRE", KEYS[1], span)
  if redis.call("ZREM", KEYS[2], jid) == 1 then
    redis.call("ZREMRANGEBYSCORE", KEYS[2], "-inf", now - tonumber(ARGV[5]))
  end
  return {1, 0}
end

local free_in = 0
if ARGV[1] == "concurrency" then
  redis.call("ZREMRANGEBYSCORE", KEYS[1], "-inf", now)
  if redis.call("ZSCORE", KEYS[1], jid) or redis.call("ZCARD", KEYS[1]) < tonumber(ARGV[3]) then
    return taken(jid, now + span)
  end
else
  redis.call("ZREMRANGEBYSCORE", KEYS[1], "-inf", now - span)
  if redis.call("ZCARD", KEYS[1]) < tonumber(ARGV[3]) then
    -- unique per start, even two of one jid in one millisecond (the count grew between)
    return taken(jid .. "@" .. now .. "#" .. redis.call("ZCARD", KEYS[1]), now)
  end
  local oldest = redis.call("ZRANGE", KEYS[1], 0, 0, "WITHSCORES")
  free_in = tonumber(oldest[2]) + span - now
end
redis.call("ZADD", KEYS[2], now, jid)
redis.call("ZREMRANGEBYSCORE", KEYS[2], "-inf", now - tonumber(ARGV[5]))
redis.call("PEXPIRE", KEYS[2], ARGV[5])
return {0, free_in}
