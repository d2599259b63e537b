-- beat: one heartbeat. Registers the process, stamps it with Redis's own
-- clock (the time recovery compares against), replaces what its threads run
-- now, hands back (and clears) the signals waiting for it, and records its
-- RSS in the memory history.  The periodic running locks it holds are
-- renewed by renew_lock.lua calls pipelined right after (their keys are in
-- their runs' queues' slots).
--
-- Nothing here decodes JSON: the caller passes counted lists of pairs.
--
-- shape: KEYS 6, ARGV 8 + 1n
-- KEYS[1] the processes set   KEYS[2] the process hash
-- KEYS[3] its workers hash    KEYS[4] its signal list
-- KEYS[5] its memory history (members "<slot start>:<KiB>", scored by slot start)
-- KEYS[6] the beats hash: "last" (anyone's latest beat), "resumed" (see below)
-- ARGV[1] identity   ARGV[2] TTL of the process and workers keys, seconds
-- ARGV[3] this beat's memory slot start   ARGV[4] RSS in KiB ("" if unknown)
-- ARGV[5] the oldest slot kept (24 h of slots)   ARGV[6] the history key's TTL
-- ARGV[7] a gap between two beats (of anyone) longer than this, seconds, means
--         nobody could beat: Redis was frozen, down or restarted
-- ARGV[8] n, then n (thread name, JSON of the job it runs) pairs
-- then field, value pairs for the process hash, to the end
need_name(1)
need_int(2, 1, LONGEST_SECONDS)
need_int(3, 0, MOST)
if ARGV[4] ~= "" then
  need_int(4, 0, MOST)
end
need_int(5, -MOST, MOST)
need_int(6, 1, LONGEST_SECONDS)
need_number(7)
local running_at = 9
local fields_at = running_at + 2 * need_int(8, 0, MOST)
need_groups(fields_at, 2)

local now = redis.call("TIME")
local beat = now[1] .. "." .. string.format("%06d", tonumber(now[2]))
-- After such a gap every heartbeat looks old: recovery (requeue.lua) waits a
-- whole threshold from "resumed" so the live processes can beat again first.
local last = tonumber(redis.call("HGET", KEYS[6], "last"))
if not last or tonumber(beat) - last > tonumber(ARGV[7]) then
  redis.call("HSET", KEYS[6], "resumed", beat)
end
redis.call("HSET", KEYS[6], "last", beat)
redis.call("HSET", KEYS[2], "beat", beat, unpack(ARGV, fields_at))
redis.call("EXPIRE", KEYS[2], ARGV[2])
redis.call("SADD", KEYS[1], ARGV[1])
redis.call("DEL", KEYS[3])
for i = running_at, fields_at - 1, 2 do
  redis.call("HSET", KEYS[3], ARGV[i], ARGV[i + 1])
end
redis.call("EXPIRE", KEYS[3], ARGV[2])
local signals = redis.call("LRANGE", KEYS[4], 0, -1)
redis.call("DEL", KEYS[4])

-- The memory history last, and best-effort: a history key Redis can't
-- write (another type under its name, say) must not cost the beat, or a
-- live process would look gone.  The failure is noted on the process hash.
-- A slot keeps the highest reading any beat in it took: a peak is what
-- matters for memory, and a spike between two slot boundaries would vanish.
local function record_memory()
  local slot, kb = tonumber(ARGV[3]), tonumber(ARGV[4])
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
  redis.call("ZREMRANGEBYSCORE", KEYS[5], "-inf", "(" .. ARGV[5])
  redis.call("EXPIRE", KEYS[5], ARGV[6])
end
local recorded, problem = pcall(record_memory)
if recorded then
  redis.call("HDEL", KEYS[2], "memory_error")
else
  local text = type(problem) == "table" and problem.err or tostring(problem)
  redis.call("HSET", KEYS[2], "memory_error", text)
end
return signals
