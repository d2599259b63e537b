-- periodic_advance: move a periodic job's schedule entry on once one of its
-- ticks is handled (periodic_tick.lua, in the run's queue's slot, or a drop
-- of missed ticks), only if the entry is still what the caller read: another
-- process that moved it meanwhile, or a start-up that rewrote or removed it,
-- wins.  The entry is bookkeeping (where the next look starts); the tick's
-- claim key is what makes a tick run once.
--
-- shape: KEYS 1, ARGV 3
-- KEYS[1] the schedule hash
-- ARGV[1] the job's name (its field)   ARGV[2] its entry as the caller read it
-- ARGV[3] the entry to store
--
-- Returns 1 if stored, 0 if the entry had changed (nothing written).
need_name(1)
need_text(2)
need_name(3)
if redis.call("HGET", KEYS[1], ARGV[1]) ~= ARGV[2] then
  return 0
end
redis.call("HSET", KEYS[1], ARGV[1], ARGV[3])
return 1
