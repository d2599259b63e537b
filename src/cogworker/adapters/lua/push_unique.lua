-- push_unique: enqueue a unique job only if its lock is free, taking the lock
-- for this jid in the same step (so of many concurrent enqueues exactly one
-- pushes).
--
-- shape: KEYS 3, ARGV 5
-- KEYS[1] the queue (or the scheduled set)   KEYS[2] the queue registry set
-- KEYS[3] the job's lock
-- ARGV[1] the queue name   ARGV[2] the payload   ARGV[3] the jid
-- ARGV[4] the lock's TTL, milliseconds
-- ARGV[5] "" to push onto the queue, or the score to schedule it at
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
return 1
