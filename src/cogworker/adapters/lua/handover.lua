-- handover: a process shutting down with a settlement it couldn't write (an
-- ack, or a failure's retry/dead entry) hands it to any process's reconciler:
-- the job leaves the in-progress list (so the shutdown requeue won't run it
-- again) and its record goes onto the unsettled list, in one step.
--
-- shape: KEYS 2, ARGV 2
-- KEYS[1] the in-progress list   KEYS[2] the unsettled list
-- ARGV[1] the payload as fetched   ARGV[2] the record (JSON)
--
-- Returns 1 if handed over, 0 if the job was no longer on the list.
need_text(1)
need_text(2)

if redis.call("LREM", KEYS[1], 1, ARGV[1]) == 0 then
  return 0
end
redis.call("RPUSH", KEYS[2], ARGV[2])
return 1
