-- defer: a job that can't run now (its while_executing lock is held by a
-- duplicate, or its per-key limit is full) leaves this process's in-progress
-- list for the scheduled set, to be looked at again later. Not a run:
-- nothing is counted.
--
-- shape: KEYS 3, ARGV 5
-- uses: _located
-- KEYS[1] this process's in-progress list   KEYS[2] the scheduled set
-- ARGV[1] the payload as fetched   ARGV[2] when to look again
-- ARGV[3] the payload to file instead (a limit's refusal counted), or "" for
--         the payload as fetched
-- ARGV[4] "1" to require the entry on KEYS[1], "0" for basic fetch (no list)
-- KEYS[3] the queue's jid index of the sets (see _located.lua)   ARGV[5] the jid
--
-- Returns 1, or 0 if the job was no longer on the list.
need_text(1)
need_number(2)
need_text(3)
need_choice(4, "0", "1")
need_text(5)

if ARGV[4] == "1" and redis.call("LREM", KEYS[1], 1, ARGV[1]) == 0 then
  return 0
end
redis.call("ZADD", KEYS[2], ARGV[2], ARGV[3] == "" and ARGV[1] or ARGV[3])
located_add(KEYS[3], ARGV[5], "schedule", ARGV[2])
return 1
