-- periodic_restore: notice that Redis lost the periodic schedule, and put a
-- process's configured entries back, once, however many processes notice at
-- the same time.
--
-- The epoch key holds a token written the first time anyone loads or
-- restores the schedule; Redis losing its data (FLUSHALL, a restart without
-- persistence, a failover to an empty replica) loses it with the schedule.
-- A process that finds the epoch missing, or other than the one it knows,
-- knows the schedule it loaded may be gone.  Entries are added only where
-- their name is missing (HSETNX): one restored by another process, or
-- changed since, is left as it is.
--
-- shape: KEYS 2, ARGV 1 + 2n
-- KEYS[1] the schedule hash   KEYS[2] the epoch key
-- ARGV[1] a fresh token, the new epoch if it is missing
-- ARGV[2 ..] (name, entry) pairs to add where missing (none: only the epoch)
--
-- Returns {1 if this call wrote the epoch (it was missing) else 0, the epoch,
-- how many entries it added}.
local created = 0
local epoch = redis.call("GET", KEYS[2])
if not epoch then
  redis.call("SET", KEYS[2], ARGV[1])
  epoch = ARGV[1]
  created = 1
end
local added = 0
for i = 2, #ARGV - 1, 2 do
  added = added + redis.call("HSETNX", KEYS[1], ARGV[i], ARGV[i + 1])
end
return {created, epoch, added}
