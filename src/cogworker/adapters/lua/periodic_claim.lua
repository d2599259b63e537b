-- periodic_claim: handle one tick of a periodic job for the whole cluster, and
-- enqueue its run in the same step.  Every worker process tries the ticks it
-- sees due; the schedule entry is the compare-and-set: a claim is refused once
-- the entry has changed since the caller read it (another process handled the
-- tick, or a start-up rewrote the schedule), so a tick is handled once.  The
-- tick's claim key guards it too, even across a rewrite of the schedule.
--
-- KEYS[1] the schedule hash   KEYS[2] the tick's claim key
-- KEYS[3] the job's running lock (its run in flight: a jid, with a TTL)
-- KEYS[4] the job's queue     KEYS[5] the queue registry set
-- ARGV[1] the job's name (its field in the schedule)
-- ARGV[2] its entry as the caller read it
-- ARGV[3] the entry to store if the run is enqueued
-- ARGV[4] the entry to store if the tick is handled without a run
-- ARGV[5] "run" (skipped while the lock is held), "catch_up" (waits for the
--         lock) or "drop" (only marked as handled)
-- ARGV[6] the payload   ARGV[7] its jid   ARGV[8] the queue name
-- ARGV[9] the running lock's TTL, milliseconds   ARGV[10] the claim key's TTL, milliseconds
--
-- Returns "stale" (the entry changed: read it again), "dropped", "taken" (the
-- tick was claimed already), "busy" (a catch-up tick waits: nothing written),
-- "skipped" (the previous run still runs) or "enqueued".
need_name(1)
for i = 2, 4 do
  need_text(i)
end
need_choice(5, "run", "catch_up", "drop")
need_text(6)
need_text(7)
need_text(8)
need_int(9, 0, LONGEST_MS)
need_int(10, 0, LONGEST_MS)

if redis.call("HGET", KEYS[1], ARGV[1]) ~= ARGV[2] then
  return "stale"
end
if ARGV[5] == "drop" then
  redis.call("HSET", KEYS[1], ARGV[1], ARGV[4])
  return "dropped"
end
if redis.call("EXISTS", KEYS[2]) == 1 then
  redis.call("HSET", KEYS[1], ARGV[1], ARGV[4])
  return "taken"
end
if redis.call("EXISTS", KEYS[3]) == 1 then
  if ARGV[5] == "catch_up" then
    return "busy"
  end
  redis.call("SET", KEYS[2], "skipped", "PX", ARGV[10])
  redis.call("HSET", KEYS[1], ARGV[1], ARGV[4])
  return "skipped"
end
redis.call("SET", KEYS[2], ARGV[7], "PX", ARGV[10])
redis.call("SET", KEYS[3], ARGV[7], "PX", ARGV[9])
redis.call("LPUSH", KEYS[4], ARGV[6])
redis.call("SADD", KEYS[5], ARGV[8])
redis.call("HSET", KEYS[1], ARGV[1], ARGV[3])
return "enqueued"
