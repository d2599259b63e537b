-- bury: move one entry from a sorted set or a list into dead, replaced by
-- the payload given (an unparseable entry wrapped, a repeat orphan with its
-- error). At most once: only the caller that removed it files it.
--
-- shape: KEYS 5 + 2n, ARGV 9
-- uses: _results, _located
-- KEYS[1] where it is now   KEYS[2] the dead set
-- KEYS[3] its queue's batch events (any unused name when ARGV[7] is "")
-- KEYS[4] the job's result (see _results.lua; any unused name when it keeps none)
-- KEYS[5] the dead set's queue's jid index of the sets (see _located.lua; a
--         sorted set KEYS[1] is that queue's too)
-- KEYS[6], KEYS[7] (optional) the job's orphanings and hand-backs counters,
--         deleted with the move
-- ARGV[1] "zset" or "list", or "taken": already taken off by the caller (basic fetch)
-- ARGV[2] the entry as stored   ARGV[3] the score
-- ARGV[4] the payload to file   ARGV[5] trim below this score   ARGV[6] most entries kept
-- ARGV[7] the batch event its death appends (adapters/batch_events.py), or ""
-- ARGV[8] its result's record   ARGV[9] its TTL, or "0" (it keeps none)
--
-- Returns 1 if this call filed it, 0 if it was already gone.
need_choice(1, "zset", "list", "taken")
need_text(2)
need_number(3)
need_text(4)
need_number(5)
need_int(6, 1, MOST)
need_text(7)
need_result(8)

local removed = 1
if ARGV[1] == "zset" then
  removed = redis.call("ZREM", KEYS[1], ARGV[2])
elseif ARGV[1] == "list" then
  removed = redis.call("LREM", KEYS[1], 1, ARGV[2])
end
if removed == 0 then
  return 0
end
if ARGV[1] == "zset" then
  located_drop(KEYS[5], jid_of(ARGV[2]), set_name(KEYS[1]))
end
redis.call("ZADD", KEYS[2], ARGV[3], ARGV[4])
located_add(KEYS[5], jid_of(ARGV[4]), "dead", ARGV[3])
trim_dead(KEYS[2], KEYS[5], ARGV[5], ARGV[6])
if ARGV[7] ~= "" then
  redis.call("RPUSH", KEYS[3], ARGV[7])
end
if KEYS[6] then
  redis.call("DEL", unpack(KEYS, 6))
end
keep_result(KEYS[4], ARGV[8], ARGV[9])
return 1
