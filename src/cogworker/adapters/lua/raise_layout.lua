-- raise_layout: note that a layout step is applied: the layout number goes
-- up to the step's, never down (of two migrations side by side, the slower
-- can't lower what the faster wrote).
--
-- shape: KEYS 1, ARGV 1
-- KEYS[1] the layout number   ARGV[1] the number of the step applied
--
-- Returns the number stored now.
local number = need_int(1, 1, MOST)
local stored = tonumber(redis.call("GET", KEYS[1]) or "")
if stored and stored >= number then
  return stored
end
redis.call("SET", KEYS[1], ARGV[1])
return number
