-- retry_many: file many failed runs of one queue for their retry in one step:
-- each comes off the list it was on, and only if it was still there (a
-- repeated or late call writes nothing for it), and goes into the queue's
-- retry set with its jid index entry, exactly as `settle` files one retry.
-- Plain: no status tracked, no unique or running lock to let go of or
-- extend, no result kept; anything else is `settle`.  A per-key limit's
-- place is let go of here too.
-- Each job's own records are written per job (its attempt, its run in its
-- own history list); the counters, the class lists' trims and the class
-- metrics (see _tallies.lua) are written once per call, not per job, as in
-- ack_many.  Entries are looked for from the list's tail (see ack_many.lua).
--
-- shape: KEYS 7 + 10n, ARGV 9 + 12n
-- uses: _tallies, _located, _lists
-- KEYS[1]  the list holding the entries   KEYS[2]  the queue's retry set
-- KEYS[3]  the queue's processed counter, in total    KEYS[4]  the same, today
-- KEYS[5]  the queue's failed counter, in total       KEYS[6]  the same, today
-- KEYS[7]  the queue's jid index of the sets (see _located.lua)
--          (the entries are of that one queue: a batch of several is a call each)
-- KEYS[8], KEYS[9], ... KEYS[17]  per entry: the job's orphanings counter, its
--          hand-backs counter (like settle's, both start over), its attempts list,
--          its history list, its class's history list on the queue, then its
--          class's metrics on the queue: the minute's, the hour's and the total
--          hash, and the queue's registry of classes (any unused names when the run
--          isn't counted), then its concurrency limit's holders (limit_take.lua; any
--          unused name when it holds no place)
-- ARGV[1]  "1" to require each entry on KEYS[1], "0" for basic fetch (no list)
-- ARGV[2]  TTL of a day's counter
-- ARGV[3]  attempts kept per job   ARGV[4]  their TTL
-- ARGV[5]  history kept per job    ARGV[6]  history kept per class
-- ARGV[7]  history TTL
-- ARGV[8]  now                     ARGV[9]  metrics TTL
-- ARGV[10], ARGV[11], ... ARGV[21]  per entry: the entry on KEYS[1], its jid, its
--          retry's score (when), the payload filed in KEYS[2], its attempt record
--          (or ""), its history record (or ""), "1" to keep that record in its own
--          history list too (else its class's only), its class, its run time in
--          microseconds (or "": not counted in the metrics), its histogram bucket,
--          "1" to refresh its class's total and registry entry (see _tallies.lua),
--          else "0", then "release" to let go of its limit place, or ""
--
-- Returns per entry 1, or 0 if it was no longer on the list.
need_choice(1, "0", "1")
need_int(2, 0, LONGEST_SECONDS)
need_int(3, 1, MOST)
need_int(4, 0, LONGEST_SECONDS)
need_int(5, 1, MOST)
need_int(6, 1, MOST)
need_int(7, 0, LONGEST_SECONDS)
need_number(8)
need_int(9, 1, LONGEST_SECONDS)
need_groups(10, 12)
for i = 10, #ARGV, 12 do
  need_text(i)
  need_text(i + 1)
  need_number(i + 2)
  need_text(i + 3)
  need_text(i + 4)
  need_text(i + 5)
  need_choice(i + 6, "0", "1")
  need_text(i + 7)
  need_run_figures(i + 8)
  need_choice(i + 11, "release", "")
end
if #KEYS ~= 7 + (#ARGV - 9) / 12 * 10 then
  error({err = "ERR cogworker: " .. #KEYS .. " keys for " .. (#ARGV - 9) / 12 .. " entries"})
end

local written = {}
local filed = 0
for i = 10, #ARGV, 12 do
  local k = 8 + (i - 10) / 12 * 10
  local jid = ARGV[i + 1]
  if ARGV[1] == "1" and redis.call("LREM", KEYS[1], -1, ARGV[i]) == 0 then
    written[#written + 1] = 0
  else
    written[#written + 1] = 1
    filed = filed + 1
    redis.call("ZADD", KEYS[2], ARGV[i + 2], ARGV[i + 3])
    located_add(KEYS[7], jid, "retry", ARGV[i + 2])
    redis.call("DEL", KEYS[k], KEYS[k + 1])
    if ARGV[i + 4] ~= "" then
      keep_list(KEYS[k + 2], ARGV[i + 4], ARGV[3], ARGV[4])
    end
    if ARGV[i + 5] ~= "" then
      if ARGV[i + 6] == "1" then
        keep_list(KEYS[k + 3], ARGV[i + 5], ARGV[5], ARGV[7])
      end
      push_class_run(KEYS[k + 4], ARGV[i + 5])
    end
    if ARGV[i + 8] ~= "" then
      -- A retry is a failed run: it counts in its class's failures.
      tally_run(KEYS[k + 5], KEYS[k + 6], KEYS[k + 7], KEYS[k + 8], ARGV[i + 7], ARGV[i + 8],
        ARGV[i + 9], "1", ARGV[i + 10])
    end
    if ARGV[i + 11] == "release" then
      redis.call("ZREM", KEYS[k + 9], jid)
    end
  end
end
if filed > 0 then
  count_ended(KEYS[3], KEYS[4], filed, ARGV[2])
  count_ended(KEYS[5], KEYS[6], filed, ARGV[2])
end
trim_class_runs(ARGV[6], ARGV[7])
write_tallies(ARGV[8], ARGV[9])
return written
