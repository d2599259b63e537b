-- requeue_one: put one job of this process's in-progress list back at the
-- front (right end) of its queue. For a stray: a job a fetch put on the list
-- whose reply never arrived (Redis timed out after doing the move).  The
-- caller registers the queue after this script (see move_due.lua).
--
-- shape: KEYS 2, ARGV 1
-- KEYS[1] the in-progress list   KEYS[2] the queue
-- ARGV[1] the payload
--
-- Returns 1 if it was on the list and moved, 0 if not there.
need_text(1)

if redis.call("LREM", KEYS[1], 1, ARGV[1]) == 0 then
  return 0
end
redis.call("RPUSH", KEYS[2], ARGV[1])
return 1
