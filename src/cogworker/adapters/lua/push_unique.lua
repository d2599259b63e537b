-- push_unique: enqueue a unique job only if its lock is free, taking the lock
-- for this jid in the same step (so of many concurrent enqueues exactly one
-- pushes), and marking a tracked job queued in that step too: written after
-- the push, the mark could land after a fast worker's "complete".
--
-- shape: KEYS 4, ARGV 8
-- KEYS[1] the queue (or the scheduled set)   KEYS[2] the queue registry set
-- KEYS[3] the job's lock   KEYS[4] its status hash (any unused name if untracked)
-- ARGV[1] the queue name   ARGV[2] the payload   ARGV[3] the jid
-- ARGV[4] the lock's TTL, milliseconds
-- ARGV[5] "" to push onto the queue, or the score to schedule it at
-- ARGV[6] "1" to mark the job queued, "0" if it isn't tracked
-- ARGV[7] the status's TTL, seconds   ARGV[8] now, for the status
--
-- Returns 1 if pushed, 0 if another jid holds the lock (a duplicate: nothing
-- pushed), 2 if this jid holds it: an earlier push of this very job (a retried
-- enqueue with the caller's jid) that hasn't ended yet, so nothing is pushed.
need_name(1)
need_text(2)
need_name(3)
need_int(4, 1, LONGEST_MS)
if need_text(5) ~= "" then
  need_number(5)
end
need_choice(6, "0", "1")
need_int(7, 0, LONGEST_SECONDS)
need_number(8)

if not redis.call("SET", KEYS[3], ARGV[3], "NX", "PX", ARGV[4]) then
  if redis.call("GET", KEYS[3]) == ARGV[3] then
    return 2
  end
  return 0
end
if ARGV[5] == "" then
  redis.call("LPUSH", KEYS[1], ARGV[2])
  redis.call("SADD", KEYS[2], ARGV[1])
else
  redis.call("ZADD", KEYS[1], ARGV[5], ARGV[2])
end
if ARGV[6] == "1" then
  redis.call("HSET", KEYS[4], "status", "queued", "update_time", ARGV[8])
  redis.call("EXPIRE", KEYS[4], ARGV[7])
end
return 1
