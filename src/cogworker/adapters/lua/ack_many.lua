-- ack_many: acknowledge many successful runs in one step: each comes off the
-- list it was on, and only if it was still there (a repeated or late call
-- writes nothing for it).  It writes what `settle` writes for a success, but
-- a periodic job's running lock or a batch member's event (those are
-- `settle`): the job's status if tracked, its run in its own history too if
-- kept there, its unique lock let go of if it still names the jid, its kept
-- result, and a per-key limit's place let go of.
-- The counters, the class lists' trims and the class metrics (see
-- _tallies.lua) are written once per call, not per job.
-- An entry is looked for from the list's tail (LREM -1): the fetch pushes
-- onto its head, so a job that ends is most often among the oldest there, and
-- a scan from the head would pass every job still running (100 and more on an
-- async worker's list).
--
-- shape: KEYS 3 + 12n, ARGV 8 + 12n
-- uses: _tallies, _results, _lists
-- KEYS[1]  the list holding the entries
-- KEYS[2]  the queue's processed counter, in total    KEYS[3]  the same, today
--          (the entries are of that one queue: a batch of several is a call each)
-- KEYS[4], KEYS[5], ... KEYS[15]  per entry: the job's orphanings counter, its
--          hand-backs counter, its class's history list on the queue, then its
--          class's metrics on the queue: the minute's, the hour's and the total
--          hash, and the queue's registry of classes, then its result (see
--          _results.lua; any unused name when it keeps none), then its concurrency
--          limit's holders (limit_take.lua; any unused name when it holds no place),
--          then its own history list, its status hash and its unique lock (any
--          unused names when it has none)
-- ARGV[1]  "1" to require each entry on KEYS[1], "0" for basic fetch (no list)
-- ARGV[2]  TTL of a day's counter
-- ARGV[3]  history kept per class   ARGV[4]  history TTL
-- ARGV[5]  now                      ARGV[6]  metrics TTL
-- ARGV[7]  history kept per job     ARGV[8]  status TTL
-- ARGV[9], ARGV[10], ... ARGV[20]  per entry: the entry on KEYS[1], its history
--          record (or ""), its class, its run time in microseconds (or "": not
--          counted in the metrics), its histogram bucket, "1" to refresh its
--          class's total and registry entry (see _tallies.lua), else "0", then
--          its result's record (or "") and TTL ("0": it keeps none), then its
--          jid ("" when it holds no place: the holders' member to remove), then
--          "1" to keep its history record in its own list too (else the class's
--          only), its new status (or "": not tracked), and the jid its unique
--          lock must name to be let go of (or "": none to let go of)
--
-- Returns per entry 1, or 0 if it was no longer on the list.
need_choice(1, "0", "1")
need_int(2, 0, LONGEST_SECONDS)
need_int(3, 1, MOST)
need_int(4, 0, LONGEST_SECONDS)
need_number(5)
need_int(6, 1, LONGEST_SECONDS)
need_int(7, 1, MOST)
need_int(8, 0, LONGEST_SECONDS)
need_groups(9, 12)
for i = 9, #ARGV, 12 do
  need_text(i)
  need_text(i + 1)
  need_text(i + 2)
  need_run_figures(i + 3)
  need_result(i + 6)
  need_text(i + 8)
  need_choice(i + 9, "0", "1")
  need_text(i + 10)
  need_text(i + 11)
end
if #KEYS ~= 3 + (#ARGV - 8) then
  error({err = "ERR cogworker: " .. #KEYS .. " keys for " .. (#ARGV - 8) / 12 .. " entries"})
end

local written = {}
local acked = 0
for i = 9, #ARGV, 12 do
  local k = 4 + (i - 9)
  local orphanings, handbacks = KEYS[k], KEYS[k + 1]
  if ARGV[1] == "1" and redis.call("LREM", KEYS[1], -1, ARGV[i]) == 0 then
    written[#written + 1] = 0
  else
    written[#written + 1] = 1
    acked = acked + 1
    redis.call("DEL", orphanings, handbacks)
    if ARGV[i + 1] ~= "" then
      if ARGV[i + 9] == "1" then
        keep_list(KEYS[k + 9], ARGV[i + 1], ARGV[7], ARGV[4])
      end
      push_class_run(KEYS[k + 2], ARGV[i + 1])
    end
    if ARGV[i + 3] ~= "" then
      tally_run(KEYS[k + 3], KEYS[k + 4], KEYS[k + 5], KEYS[k + 6], ARGV[i + 2], ARGV[i + 3],
        ARGV[i + 4], "0", ARGV[i + 5])
    end
    keep_result(KEYS[k + 7], ARGV[i + 6], ARGV[i + 7])
    if ARGV[i + 8] ~= "" then
      redis.call("ZREM", KEYS[k + 8], ARGV[i + 8])
    end
    if ARGV[i + 11] ~= "" and redis.call("GET", KEYS[k + 11]) == ARGV[i + 11] then
      redis.call("DEL", KEYS[k + 11])
    end
    if ARGV[i + 10] ~= "" then
      redis.call("HSET", KEYS[k + 10], "status", ARGV[i + 10], "update_time", ARGV[5])
      redis.call("EXPIRE", KEYS[k + 10], ARGV[8])
    end
  end
end
if acked > 0 then
  count_ended(KEYS[2], KEYS[3], acked, ARGV[2])
end
trim_class_runs(ARGV[3], ARGV[4])
write_tallies(ARGV[5], ARGV[6])
return written
