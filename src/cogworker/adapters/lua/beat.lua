-- beat: one heartbeat. Registers the process, stamps it with Redis's own
-- clock (the time recovery compares against), replaces what its threads run
-- now, records its RSS in the memory history, and hands back (and clears)
-- the signals waiting for it.
--
-- KEYS[1] the processes set   KEYS[2] the process hash
-- KEYS[3] its workers hash    KEYS[4] its signal list
-- KEYS[5] its memory history (members "<slot start>:<KiB>", scored by slot start)
-- KEYS[6] the beats hash: "last" (anyone's latest beat), "resumed" (see below)
-- ARGV[1] identity   ARGV[2] TTL of the process and workers keys, seconds
-- ARGV[3] JSON object: thread name -> JSON of the job it runs
-- ARGV[4] this beat's memory slot start   ARGV[5] RSS in KiB ("" if unknown)
-- ARGV[6] the oldest slot kept (24 h of slots)   ARGV[7] the history key's TTL
-- ARGV[8] JSON list of [lock key, jid] of the periodic runs this process holds
-- ARGV[9] their TTL, milliseconds (each renewed only while the jid still holds it)
-- ARGV[10] a gap between two beats (of anyone) longer than this, seconds, means
--          nobody could beat: Redis was frozen, down or restarted
-- ARGV[11..] field, value pairs for the process hash
local now = redis.call("TIME")
local beat = now[1] .. "." .. string.format("%06d", tonumber(now[2]))
-- After such a gap every heartbeat looks old: recovery (requeue.lua) waits a
-- whole threshold from "resumed" so the live processes can beat again first.
local last = tonumber(redis.call("HGET", KEYS[6], "last"))
if not last or tonumber(beat) - last > tonumber(ARGV[10]) then
  redis.call("HSET", KEYS[6], "resumed", beat)
end
redis.call("HSET", KEYS[6], "last", beat)
redis.call("HSET", KEYS[2], "beat", beat, unpack(ARGV, 11))
redis.call("EXPIRE", KEYS[2], ARGV[2])
redis.call("SADD", KEYS[1], ARGV[1])
redis.call("DEL", KEYS[3])
for thread, work in pairs(cjson.decode(ARGV[3])) do
  redis.call("HSET", KEYS[3], thread, work)
end
redis.call("EXPIRE", KEYS[3], ARGV[2])
-- A slot keeps the highest reading any beat in it took: a peak is what
-- matters for memory, and a spike between two slot boundaries would vanish.
local slot, kb = tonumber(ARGV[4]), tonumber(ARGV[5])
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
redis.call("ZREMRANGEBYSCORE", KEYS[5], "-inf", "(" .. ARGV[6])
redis.call("EXPIRE", KEYS[5], ARGV[7])
for _, held in ipairs(cjson.decode(ARGV[8])) do
  if redis.call("GET", held[1]) == held[2] then
    redis.call("PEXPIRE", held[1], ARGV[9])
  end
end
local signals = redis.call("LRANGE", KEYS[4], 0, -1)
redis.call("DEL", KEYS[4])
return signals
