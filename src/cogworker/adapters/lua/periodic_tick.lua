-- periodic_tick: the one claim of a periodic job's tick, cluster-wide, and the
-- enqueue of its run in the same step; or (action "now") a run enqueued
-- outside the schedule, as the dashboard's "Enqueue now" does.  Every key is
-- in the run's queue's slot.  The tick's claim key is the guard: of all the
-- processes trying tick T, the first to find it free handles T (a run, or a
-- skip), every later one finds it "taken".  The schedule entry is moved on
-- after this script, in its own slot (periodic_advance.lua); a crash between
-- the two leaves the entry behind, and the next process to try T gets
-- "taken" and moves it on: T is handled once either way.  A run is enqueued
-- only if the job's running lock is free and, for a unique job, its unique
-- lock too; both are taken for the run's jid, and a tracked run is marked
-- queued, in the same step.  The caller registers the queue after this
-- script (see move_due.lua).
--
-- shape: KEYS 5, ARGV 8
-- KEYS[1] the tick's claim key (the jid it enqueued, or "skipped"/"duplicate")
-- KEYS[2] the job's running lock (its run in flight: a jid, with a TTL)
-- KEYS[3] the job's queue
-- KEYS[4] the run's unique lock (any unused name if it takes none at enqueue)
-- KEYS[5] the run's status hash (any unused name if it isn't tracked)
-- ARGV[1] "run" (skipped while a lock is held), "catch_up" (waits for the
--         locks) or "now" (no tick: no claim is checked or written)
-- ARGV[2] the payload   ARGV[3] its jid
-- ARGV[4] the running lock's TTL, milliseconds   ARGV[5] the claim key's TTL, milliseconds
-- ARGV[6] the unique lock's TTL, milliseconds (0: none taken)
-- ARGV[7] the status's TTL, seconds (0: not tracked)   ARGV[8] now, for the status
--
-- Returns "taken" (the tick was claimed already), "busy" (a catch-up tick
-- waits: nothing written), "skipped" (the previous run still runs),
-- "duplicate" (another job holds the unique lock) or "enqueued".
local action = need_choice(1, "run", "catch_up", "now")
need_text(2)
need_text(3)
local lock_ttl, claim_ttl = need_int(4, 1, LONGEST_MS), need_int(5, 1, LONGEST_MS)
local unique_ttl = need_int(6, 0, LONGEST_MS)
local status_ttl = need_int(7, 0, LONGEST_SECONDS)
need_number(8)
local ticked = action ~= "now"
if ticked and redis.call("EXISTS", KEYS[1]) == 1 then
  return "taken"
end

-- The tick is handled without a run (a catch-up tick waits instead).
local function passed(result)
  if action == "catch_up" then
    return "busy"
  end
  if ticked then
    redis.call("SET", KEYS[1], result, "PX", claim_ttl)
  end
  return result
end

if redis.call("EXISTS", KEYS[2]) == 1 then
  return passed("skipped")
end
if unique_ttl > 0 and not redis.call("SET", KEYS[4], ARGV[3], "NX", "PX", unique_ttl) then
  return passed("duplicate")
end
if ticked then
  redis.call("SET", KEYS[1], ARGV[3], "PX", claim_ttl)
end
redis.call("SET", KEYS[2], ARGV[3], "PX", lock_ttl)
redis.call("LPUSH", KEYS[3], ARGV[2])
if status_ttl > 0 then
  redis.call("HSET", KEYS[5], "status", "queued", "update_time", ARGV[8])
  redis.call("EXPIRE", KEYS[5], status_ttl)
end
return "enqueued"
