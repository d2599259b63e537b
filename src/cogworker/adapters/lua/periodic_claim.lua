-- periodic_claim: handle one tick of a periodic job for the whole cluster, and
-- enqueue its run in the same step; or (action "now") enqueue a run outside
-- the schedule, as the dashboard's "Enqueue now" does.  Every worker process
-- tries the ticks it sees due; the schedule entry is the compare-and-set: a
-- claim is refused once the entry has changed since the caller read it
-- (another process handled the tick, or a start-up rewrote the schedule), so
-- a tick is handled once.  The tick's claim key guards it too, even across a
-- rewrite of the schedule.  A run is enqueued only if the job's running lock
-- is free and, for a unique job, its unique lock too; both are taken for the
-- run's jid, and a tracked run is marked queued, in the same step.  The
-- caller registers the queue after this script (see move_due.lua).
--
-- shape: KEYS 6, ARGV 12
-- KEYS[1] the schedule hash   KEYS[2] the tick's claim key
-- KEYS[3] the job's running lock (its run in flight: a jid, with a TTL)
-- KEYS[4] the job's queue
-- KEYS[5] the run's unique lock (any unused name if it takes none at enqueue)
-- KEYS[6] the run's status hash (any unused name if it isn't tracked)
-- ARGV[1] the job's name (its field in the schedule)
-- ARGV[2] its entry as the caller read it
-- ARGV[3] the entry to store if the run is enqueued
-- ARGV[4] the entry to store if the tick is handled without a run
-- ARGV[5] "run" (skipped while a lock is held), "catch_up" (waits for the
--         locks), "drop" (only marked as handled) or "now" (no tick: the
--         schedule is neither checked nor changed)
-- ARGV[6] the payload   ARGV[7] its jid
-- ARGV[8] the running lock's TTL, milliseconds   ARGV[9] the claim key's TTL, milliseconds
-- ARGV[10] the unique lock's TTL, milliseconds (0: none taken)
-- ARGV[11] the status's TTL, seconds (0: not tracked)   ARGV[12] now, for the status
--
-- Returns "stale" (the entry changed: read it again), "dropped", "taken" (the
-- tick was claimed already), "busy" (a catch-up tick waits: nothing written),
-- "skipped" (the previous run still runs), "duplicate" (another job holds the
-- unique lock) or "enqueued".
need_name(1)
for i = 2, 4 do
  need_text(i)
end
local action = need_choice(5, "run", "catch_up", "drop", "now")
need_text(6)
need_text(7)
local lock_ttl, claim_ttl = need_int(8, 1, LONGEST_MS), need_int(9, 1, LONGEST_MS)
local unique_ttl = need_int(10, 0, LONGEST_MS)
local status_ttl = need_int(11, 0, LONGEST_SECONDS)
need_number(12)
local ticked = action ~= "now"
if ticked and redis.call("HGET", KEYS[1], ARGV[1]) ~= ARGV[2] then
  return "stale"
end
if action == "drop" then
  redis.call("HSET", KEYS[1], ARGV[1], ARGV[4])
  return "dropped"
end
if ticked and redis.call("EXISTS", KEYS[2]) == 1 then
  redis.call("HSET", KEYS[1], ARGV[1], ARGV[4])
  return "taken"
end

-- The tick is handled without a run (a catch-up tick waits instead).
local function passed(result)
  if action == "catch_up" then
    return "busy"
  end
  if ticked then
    redis.call("SET", KEYS[2], result, "PX", claim_ttl)
    redis.call("HSET", KEYS[1], ARGV[1], ARGV[4])
  end
  return result
end

if redis.call("EXISTS", KEYS[3]) == 1 then
  return passed("skipped")
end
if unique_ttl > 0 and not redis.call("SET", KEYS[5], ARGV[7], "NX", "PX", unique_ttl) then
  return passed("duplicate")
end
if ticked then
  redis.call("SET", KEYS[2], ARGV[7], "PX", claim_ttl)
  redis.call("HSET", KEYS[1], ARGV[1], ARGV[3])
end
redis.call("SET", KEYS[3], ARGV[7], "PX", lock_ttl)
redis.call("LPUSH", KEYS[4], ARGV[6])
if status_ttl > 0 then
  redis.call("HSET", KEYS[6], "status", "queued", "update_time", ARGV[12])
  redis.call("EXPIRE", KEYS[6], status_ttl)
end
return "enqueued"
