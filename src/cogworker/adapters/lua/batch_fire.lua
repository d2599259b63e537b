-- batch_fire: push a batch's callback onto its queue, once: a marker in the
-- queue's slot, named by the callback's fixed jid, says it was pushed, so a
-- push repeated after a crash (between this and the batch's own note, in
-- another slot) writes nothing.
--
-- shape: KEYS 2, ARGV 2
-- KEYS[1] the marker   KEYS[2] the queue
-- ARGV[1] the callback's payload   ARGV[2] the marker's TTL, seconds
--
-- Returns 1 if this call pushed it, 0 if it was pushed before.
need_name(1)
need_int(2, 1, LONGEST_SECONDS)

if not redis.call("SET", KEYS[1], "1", "NX", "EX", ARGV[2]) then
  return 0
end
redis.call("LPUSH", KEYS[2], ARGV[1])
return 1
