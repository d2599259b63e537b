-- ack_many: acknowledge many plain successful runs in one step: each comes
-- off the list it was on, and only if it was still there (a repeated or
-- late call writes nothing for it).  Plain: no status tracked, no lock to
-- let go, history kept in the class's list only; anything else is `settle`.
-- The counters and the class lists are written once per call, not per job.
--
-- shape: KEYS 3 + 3n, ARGV 4 + 2n
-- KEYS[1]  the list holding the entries
-- KEYS[2]  processed, in total    KEYS[3]  processed, today
-- KEYS[4], KEYS[5], KEYS[6], ...  per entry: the job's orphanings counter, its
--          hand-backs counter, its class's history list
-- ARGV[1]  "1" to require each entry on KEYS[1], "0" for basic fetch (no list)
-- ARGV[2]  TTL of a day's counter
-- ARGV[3]  history kept per class   ARGV[4]  history TTL
-- ARGV[5], ARGV[6], ...  per entry: the entry on KEYS[1], its history record (or "")
--
-- Returns per entry 1, or 0 if it was no longer on the list.
need_choice(1, "0", "1")
need_int(2, 0, LONGEST_SECONDS)
need_int(3, 1, MOST)
need_int(4, 0, LONGEST_SECONDS)
need_groups(5, 2)
for i = 5, #ARGV, 2 do
  need_text(i)
  need_text(i + 1)
end
if #KEYS ~= 3 + 3 * (#ARGV - 4) / 2 then
  error({err = "ERR cogworker: " .. #KEYS .. " keys for " .. (#ARGV - 4) / 2 .. " entries"})
end

local written = {}
local acked = 0
local histories, seen = {}, {}
for i = 5, #ARGV, 2 do
  local n = (i - 5) / 2
  local orphanings, handbacks, history = KEYS[4 + 3 * n], KEYS[5 + 3 * n], KEYS[6 + 3 * n]
  if ARGV[1] == "1" and redis.call("LREM", KEYS[1], 1, ARGV[i]) == 0 then
    written[#written + 1] = 0
  else
    written[#written + 1] = 1
    acked = acked + 1
    redis.call("DEL", orphanings, handbacks)
    if ARGV[i + 1] ~= "" then
      redis.call("LPUSH", history, ARGV[i + 1])
      if not seen[history] then
        seen[history] = true
        histories[#histories + 1] = history
      end
    end
  end
end
if acked > 0 then
  redis.call("INCRBY", KEYS[2], acked)
  -- A day's counter gets its TTL when this call created it.
  if redis.call("INCRBY", KEYS[3], acked) == acked then
    redis.call("EXPIRE", KEYS[3], ARGV[2])
  end
end
for _, history in ipairs(histories) do
  redis.call("LTRIM", history, 0, tonumber(ARGV[3]) - 1)
  redis.call("EXPIRE", history, ARGV[4])
end
return written
