-- _limit_places: a place taken under a per-key limit (domain/key_limits.py),
-- or refused: by a job about to run (limit_take.lua) or by the fetch that
-- moves it onto an in-progress list (fetch.lua).  Every key is in the job's
-- queue's slot.
--
-- A concurrency limit's key is a sorted set of the jids holding a place,
-- scored by when the place runs out (Redis's clock, milliseconds): the
-- holder's heartbeat renews it (limit_renew), its settlement lets it go
-- (settle, ack_many), and a place whose process died runs out by itself.  A
-- jid already holding a place (a run recovered after its process died)
-- takes it again without counting twice.
--
-- A rate limit's key is a sorted set of the starts within the last window,
-- one member per start (jid and time), scored by the start's time.
--
-- The waiting set remembers the jobs refused lately (scored by the refusal's
-- time), for the dashboard: a job leaves it when it takes a place, or when
-- its last refusal is older than the horizon.

-- Redis's clock, in milliseconds.
local function limit_now()
  local time = redis.call("TIME")
  return tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
end

-- Take `jid`'s place in `holders` (kind "concurrency" or "rate", at most
-- `max`; `span`: how long a concurrency place lasts unrenewed, or a rate's
-- window; `horizon`: the waiting set's), or note its refusal in `waiting`.
-- Returns true, 0 if taken; false and how long until a rate's window frees a
-- place (0 for a concurrency limit: unknown) if refused.
local function take_place(holders, waiting, kind, jid, max, span, horizon, now)
  local function taken(member, score)
    redis.call("ZADD", holders, score, member)
    redis.call("PEXPIRE", holders, span)
    if redis.call("ZREM", waiting, jid) == 1 then
      redis.call("ZREMRANGEBYSCORE", waiting, "-inf", now - horizon)
    end
    return true, 0
  end

  local free_in = 0
  if kind == "concurrency" then
    -- The places that ran out are dropped only once the key looks full: below max
    -- with them, it is below max without them.
    if redis.call("ZCARD", holders) < max then
      return taken(jid, now + span)
    end
    redis.call("ZREMRANGEBYSCORE", holders, "-inf", now)
    if redis.call("ZCARD", holders) < max or redis.call("ZSCORE", holders, jid) then
      return taken(jid, now + span)
    end
  else
    redis.call("ZREMRANGEBYSCORE", holders, "-inf", now - span)
    if redis.call("ZCARD", holders) < max then
      -- unique per start, even two of one jid in one millisecond (the count grew between)
      return taken(jid .. "@" .. now .. "#" .. redis.call("ZCARD", holders), now)
    end
    local oldest = redis.call("ZRANGE", holders, 0, 0, "WITHSCORES")
    free_in = tonumber(oldest[2]) + span - now
  end
  redis.call("ZADD", waiting, now, jid)
  redis.call("ZREMRANGEBYSCORE", waiting, "-inf", now - horizon)
  redis.call("PEXPIRE", waiting, horizon)
  return false, free_in
end
