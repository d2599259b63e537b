-- move_entry: one member of a sorted set of an older layout moved, with its
-- score, to the set it goes to in the next (`cogworker migrate`, layout step
-- 8: the scheduled, retry and dead sets kept for all queues, to the set of
-- the queue each entry names, `domain/layout_splits.py`), so it is in one
-- set or the other at every moment, never both, never neither.  The older
-- layout ran on one node only: the two keys may be in different slots.
--
-- shape: KEYS 2, ARGV 1
-- KEYS[1] the old set   KEYS[2] the set the member goes to
-- ARGV[1] the member
--
-- Returns "moved", or "absent": the member isn't in the old set (moved by a
-- run before, or never there); nothing is written then.
need_text(1)

if redis.call("TYPE", KEYS[1]).ok ~= "zset" then
  return "absent"
end
local score = redis.call("ZSCORE", KEYS[1], ARGV[1])
if not score then
  return "absent"
end
redis.call("ZADD", KEYS[2], score, ARGV[1])
redis.call("ZREM", KEYS[1], ARGV[1])
return "moved"
