-- beat: one heartbeat. Stamps the process with Redis's own clock (the time
-- recovery compares against, judge_gone.lua) and deletes its suspect mark,
-- replaces what its threads run now, hands back (and clears) the signals
-- waiting for it, and records its RSS in the memory history.  The caller
-- registers the process right after, in the same pipeline
-- (docs/redis-cluster.md, "Registries"), and renews the periodic running
-- locks it holds with renew_lock.lua calls (their keys are in their runs'
-- queues' slots).
--
-- Nothing here decodes JSON: the caller passes counted lists of pairs.
--
-- shape: KEYS 5, ARGV 6 + 1n
-- KEYS[1] its suspect mark    KEYS[2] the process hash
-- KEYS[3] its workers hash    KEYS[4] its signal list
-- KEYS[5] its memory history (members "<slot start>:<KiB>", scored by slot start)
-- ARGV[1] the TTL of the process and workers keys, seconds
-- ARGV[2] this beat's memory slot start   ARGV[3] RSS in KiB ("" if unknown)
-- ARGV[4] the oldest slot kept (24 h of slots)   ARGV[5] the history key's TTL
-- ARGV[6] n, then n (thread name, JSON of the job it runs) pairs
-- then field, value pairs for the process hash, to the end
--
-- Returns {1 if the process hash was there before this beat else 0, 1 if a
-- suspect mark was (and is now deleted) else 0, the signals}.
need_int(1, 1, LONGEST_SECONDS)
need_int(2, 0, MOST)
if ARGV[3] ~= "" then
  need_int(3, 0, MOST)
end
need_int(4, -MOST, MOST)
need_int(5, 1, LONGEST_SECONDS)
local running_at = 7
local fields_at = running_at + 2 * need_int(6, 0, MOST)
need_groups(fields_at, 2)

local now = redis.call("TIME")
local beat = now[1] .. "." .. string.format("%06d", tonumber(now[2]))
-- Whether a verdict may have deleted the hash (judge_gone.lua keeps the mark
-- until the recovery's end): the caller tells a declared-gone process from one
-- whose hash only expired (docs/reliability.md).
local found = redis.call("EXISTS", KEYS[2])
local marked = redis.call("DEL", KEYS[1])
redis.call("HSET", KEYS[2], "beat", beat, unpack(ARGV, fields_at))
redis.call("EXPIRE", KEYS[2], ARGV[1])
redis.call("DEL", KEYS[3])
for i = running_at, fields_at - 1, 2 do
  redis.call("HSET", KEYS[3], ARGV[i], ARGV[i + 1])
end
redis.call("EXPIRE", KEYS[3], ARGV[1])
local signals = redis.call("LRANGE", KEYS[4], 0, -1)
redis.call("DEL", KEYS[4])

-- The memory history last, and best-effort: a history key Redis can't
-- write (another type under its name, say) must not cost the beat, or a
-- live process would look gone.  The failure is noted on the process hash.
-- A slot keeps the highest reading any beat in it took: a peak is what
-- matters for memory, and a spike between two slot boundaries would vanish.
local function record_memory()
  local slot, kb = tonumber(ARGV[2]), tonumber(ARGV[3])
  if kb then
    for _, member in ipairs(redis.call("ZRANGEBYSCORE", KEYS[5], slot, slot)) do
      local seen = tonumber(string.match(member, ":(%d+)$"))
      if seen and seen >= kb then
        kb = nil
        break
      end
    end
  end
  if kb then
    redis.call("ZREMRANGEBYSCORE", KEYS[5], slot, slot)
    redis.call("ZADD", KEYS[5], slot, slot .. ":" .. kb)
  end
  redis.call("ZREMRANGEBYSCORE", KEYS[5], "-inf", "(" .. ARGV[4])
  redis.call("EXPIRE", KEYS[5], ARGV[5])
end
local recorded, problem = pcall(record_memory)
if recorded then
  redis.call("HDEL", KEYS[2], "memory_error")
else
  local text = type(problem) == "table" and problem.err or tostring(problem)
  redis.call("HSET", KEYS[2], "memory_error", text)
end
return {found, marked, signals}
