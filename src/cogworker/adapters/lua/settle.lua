-- settle: write a job's outcome in one step with taking it off the list it
-- was on, and only if it was still there: a repeated or late call finds
-- nothing and writes nothing.
--
-- The list is this process's in-progress list (a run just ended), or the
-- queue's unsettled list (a settlement a stopped process handed over).
--
-- shape: KEYS 22, ARGV 33
-- uses: _tallies, _results, _located, _lists
-- KEYS[1]  the list holding the entry
-- KEYS[2]  the target sorted set (retry or dead; unused for ack and discard)
-- KEYS[3]  its queue's processed counter, in total    KEYS[4]  the same, today
-- KEYS[5]  its queue's counter of the end in total: failed (retry, dead, discard),
--          cancelled or expired (unused for ack)    KEYS[6]  the same, today
-- KEYS[7]  the job's orphanings counter   KEYS[8] its attempts list
-- KEYS[14] its hand-backs counter (see requeue.lua; like KEYS[7], it starts over)
-- KEYS[9]  its history list       KEYS[10] its class's history list on its queue
-- KEYS[11] its status hash
-- KEYS[12] its unique lock (or any unused name)   KEYS[13] its periodic running lock (likewise)
-- KEYS[15] its class's metrics on its queue: the minute's hash   KEYS[16] the hour's
-- KEYS[17] the total hash   KEYS[18] the queue's registry of classes (see _tallies.lua;
--          any unused names when the run isn't counted)
-- KEYS[19] its concurrency limit's holders (limit_take.lua; or any unused name)
-- ARGV[1]  the entry on KEYS[1]
-- ARGV[2]  "1" to require the entry there, "0" for basic fetch (no list)
-- ARGV[3]  "ack", "retry", "dead", "discard", "cancel" or "expire"
-- ARGV[4]  the score (when to retry, when it died)   ARGV[5] the payload to file
-- ARGV[6]  TTL of a day's counter
-- ARGV[7]  dead set: trim entries scored below this   ARGV[8] dead set: most kept
-- ARGV[9]  the attempt record, or ""    ARGV[10] attempts kept   ARGV[11] their TTL
-- ARGV[12] the history record, or ""    ARGV[13] kept per job    ARGV[14] kept per class
-- ARGV[15] history TTL
-- ARGV[16] the new status, or "" (not tracked)   ARGV[17] status TTL   ARGV[18] now
-- ARGV[19] the jid (the owner the locks must name)
-- ARGV[20] the unique lock: "release", "extend" or ""   ARGV[21] extended TTL, milliseconds
-- ARGV[22] the running lock: "release" or ""
-- ARGV[23] "1" to keep the history record in the job's own list too (else the class's only)
-- ARGV[24] the job's class
-- ARGV[25] the run's time in microseconds, or "" (no run to count in the metrics)
-- ARGV[26] its histogram bucket
-- ARGV[27] "1" to refresh its class's total and registry entry (see _tallies.lua), else "0"
-- ARGV[28] "1" if it failed, else "0"   ARGV[29] metrics TTL
-- ARGV[30] its concurrency place: "release" or ""
-- KEYS[20] its queue's batch events (any unused name when ARGV[31] is "")
-- ARGV[31] the batch event a final outcome of a batch member appends, or ""
--          (adapters/batch_events.py)
-- KEYS[21] its result (see _results.lua; any unused name when it keeps none)
-- ARGV[32] its result's record, or "" (none, or not ended: a retry)
-- ARGV[33] its result's TTL, or "0" (it keeps none)
-- KEYS[22] its queue's jid index of the sets (see _located.lua), written with
--          a retry or a death
--
-- Returns 1, or 0 if the entry was no longer on the list.
need_text(1)
need_choice(2, "0", "1")
need_choice(3, "ack", "retry", "dead", "discard", "cancel", "expire")
need_number(4)
need_text(5)
need_int(6, 0, LONGEST_SECONDS)
need_number(7)
need_int(8, 1, MOST)
need_text(9)
need_int(10, 1, MOST)
need_int(11, 0, LONGEST_SECONDS)
need_text(12)
need_int(13, 1, MOST)
need_int(14, 1, MOST)
need_int(15, 0, LONGEST_SECONDS)
need_text(16)
need_int(17, 0, LONGEST_SECONDS)
need_number(18)
need_text(19)
need_choice(20, "release", "extend", "")
need_int(21, ARGV[20] == "extend" and 1 or 0, LONGEST_MS)
need_choice(22, "release", "")
need_choice(23, "0", "1")
need_text(24)
need_run_figures(25)
need_choice(28, "0", "1")
need_int(29, 1, LONGEST_SECONDS)
need_choice(30, "release", "")
need_text(31)
need_result(32)

-- From the tail: the oldest entries are there (see ack_many.lua).
if ARGV[2] == "1" and redis.call("LREM", KEYS[1], -1, ARGV[1]) == 0 then
  return 0
end
local kind = ARGV[3]

count_ended(KEYS[3], KEYS[4], 1, ARGV[6])
if kind ~= "ack" then
  count_ended(KEYS[5], KEYS[6], 1, ARGV[6])
end
if kind == "retry" or kind == "dead" then
  redis.call("ZADD", KEYS[2], ARGV[4], ARGV[5])
  located_add(KEYS[22], ARGV[19], kind, ARGV[4])
end
if kind == "dead" then
  trim_dead(KEYS[2], KEYS[22], ARGV[7], ARGV[8])
end
redis.call("DEL", KEYS[7], KEYS[14])
if ARGV[9] ~= "" then
  keep_list(KEYS[8], ARGV[9], ARGV[10], ARGV[11])
end
if ARGV[12] ~= "" then
  if ARGV[23] == "1" then
    keep_list(KEYS[9], ARGV[12], ARGV[13], ARGV[15])
  end
  keep_list(KEYS[10], ARGV[12], ARGV[14], ARGV[15])
end
local function owned(lock)
  return redis.call("GET", lock) == ARGV[19]
end
if ARGV[20] == "release" and owned(KEYS[12]) then
  redis.call("DEL", KEYS[12])
elseif ARGV[20] == "extend" and owned(KEYS[12]) then
  redis.call("PEXPIRE", KEYS[12], ARGV[21])
end
if ARGV[22] == "release" and owned(KEYS[13]) then
  redis.call("DEL", KEYS[13])
end
if ARGV[30] == "release" then
  redis.call("ZREM", KEYS[19], ARGV[19])
end
if ARGV[16] ~= "" then
  redis.call("HSET", KEYS[11], "status", ARGV[16], "update_time", ARGV[18])
  redis.call("EXPIRE", KEYS[11], ARGV[17])
end
if ARGV[25] ~= "" then
  tally_run(KEYS[15], KEYS[16], KEYS[17], KEYS[18], ARGV[24], ARGV[25], ARGV[26], ARGV[28],
    ARGV[27])
  write_tallies(ARGV[18], ARGV[29])
end
if ARGV[31] ~= "" then
  redis.call("RPUSH", KEYS[20], ARGV[31])
end
keep_result(KEYS[21], ARGV[32], ARGV[33])
return 1
