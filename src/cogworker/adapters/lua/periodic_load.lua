-- periodic_load: a worker's start-up change to the periodic schedule (its
-- configured jobs replacing or merged into what is stored), applied only if
-- the schedule is still exactly as the caller read it; else nothing is
-- written and the caller reads it again.
--
-- shape: KEYS 1, ARGV 2 + 1n
-- KEYS[1] the schedule hash
-- ARGV[1] n, then from ARGV[2] n (name, entry) pairs: the schedule as read;
-- ARGV[2n+2] m, then m (name, entry) pairs to write
-- then the names to delete, to the end of ARGV
--
-- Returns 1 if applied, 0 if the schedule had changed.
do
  local pairs_at = 2 + 2 * need_int(1, 0, MOST)
  local writes_at = pairs_at + 1
  need_int(pairs_at, 0, (#ARGV - writes_at + 1) / 2)
end

local n = tonumber(ARGV[1])
local seen = {}
for i = 2, 2 * n, 2 do
  seen[ARGV[i]] = ARGV[i + 1]
end
local current = redis.call("HGETALL", KEYS[1])
if #current ~= 2 * n then
  return 0
end
for i = 1, #current, 2 do
  if seen[current[i]] ~= current[i + 1] then
    return 0
  end
end
local at = 2 * n + 2
local m = tonumber(ARGV[at])
for i = at + 1, at + 2 * m - 1, 2 do
  redis.call("HSET", KEYS[1], ARGV[i], ARGV[i + 1])
end
for i = at + 2 * m + 1, #ARGV do
  redis.call("HDEL", KEYS[1], ARGV[i])
end
return 1
