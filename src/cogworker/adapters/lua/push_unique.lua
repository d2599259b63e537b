-- push_unique: enqueue a unique job only if its lock is free, taking the lock
-- for this jid in the same step (so of many concurrent enqueues exactly one
-- pushes), and marking a tracked job queued in that step too: written after
-- the push, the mark could land after a fast worker's "complete".  The caller
-- registers the queue (an SADD of the registry, a global key in another slot on
-- Redis Cluster, after this script, when its client hasn't lately).
--
-- shape: KEYS 2 + 2n, ARGV 3 + 4n
-- uses: _located
-- n is 0 or 1: a job pushed now and not tracked (the usual unique push) is sent
-- without the tail (KEYS 3-4, ARGV 4-7), which is then read as "now, untracked".
-- KEYS[1] the queue (or the scheduled set)
-- KEYS[2] the job's lock   KEYS[3] its status hash (any unused name if untracked)
-- KEYS[4] the queue's jid index of the sets (see _located.lua), written when
--         it is scheduled
-- ARGV[1] the payload   ARGV[2] the jid
-- ARGV[3] the lock's TTL, milliseconds
-- ARGV[4] "" to push onto the queue, or the score to schedule it at
-- ARGV[5] "1" to mark the job queued, "0" if it isn't tracked
-- ARGV[6] the status's TTL, seconds   ARGV[7] now, for the status
--
-- Returns 1 if pushed, 0 if another jid holds the lock (a duplicate: nothing
-- pushed), 2 if this jid holds it: an earlier push of this very job (a retried
-- enqueue with the caller's jid) that hasn't ended yet, so nothing is pushed.
need_text(1)
need_name(2)
need_int(3, 1, LONGEST_MS)
local scheduled, tracked = false, false
if (#KEYS == 4) ~= (#ARGV == 7) then
  error({err = "ERR cogworker: " .. #KEYS .. " KEYS with " .. #ARGV .. " ARGV, expected 2 and 3 or 4 and 7"})
end
if #ARGV > 3 then
  scheduled = need_text(4) ~= ""
  if scheduled then
    need_number(4)
  end
  tracked = need_choice(5, "0", "1") == "1"
  need_int(6, 0, LONGEST_SECONDS)
  need_number(7)
end

if not redis.call("SET", KEYS[2], ARGV[2], "NX", "PX", ARGV[3]) then
  if redis.call("GET", KEYS[2]) == ARGV[2] then
    return 2
  end
  return 0
end
if not scheduled then
  redis.call("LPUSH", KEYS[1], ARGV[1])
else
  redis.call("ZADD", KEYS[1], ARGV[4], ARGV[1])
  located_add(KEYS[4], ARGV[2], "schedule", ARGV[4])
end
if tracked then
  redis.call("HSET", KEYS[3], "status", "queued", "update_time", ARGV[7])
  redis.call("EXPIRE", KEYS[3], ARGV[6])
end
return 1
