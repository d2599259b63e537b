-- rewrite_entry: one entry of a list, sorted set or hash replaced where it is
-- by its rewrite (`cogworker migrate`, layout step 6: the lock names a
-- waiting job's record carries, `domain/relock.py`), and the locks its job
-- holds moved to the names the rewrite gives them, in the same step: a
-- record names where its job's locks are at every moment, so the settlement
-- that reads it releases the right key.  The older layout ran on one node
-- only: this script may name keys of several slots.
--
-- shape: KEYS 1 + 2n, ARGV 5
-- KEYS[1] the list, sorted set or hash
-- KEYS[2i], KEYS[2i+1] a lock's old name and its new one
-- ARGV[1] "list", "zset" or "hash"
-- ARGV[2] where the entry was read: a list's index counted from its right end
--         (negative: pushes onto the left end don't shift it), a hash's field,
--         "" for a sorted set (a member is its own place)
-- ARGV[3] the entry as read   ARGV[4] its rewrite
-- ARGV[5] the jid whose locks move: a lock holding it goes to its new name
--         (unless that is held already: the new one wins), others stay
--
-- Returns "rewritten", or "absent": the entry isn't there any more (taken,
-- or rewritten by a run before); nothing is written then.
local kind = need_choice(1, "list", "zset", "hash")
need_text(3)
need_text(4)

local function replaced()
  if kind == "list" then
    local at = need_int(2, -MOST, -1)
    if redis.call("LINDEX", KEYS[1], at) ~= ARGV[3] then
      -- Moved since it was read: its place now, searched from the right end.
      at = redis.call("LPOS", KEYS[1], ARGV[3], "RANK", -1)
      if not at then
        return false
      end
    end
    redis.call("LSET", KEYS[1], at, ARGV[4])
  elseif kind == "zset" then
    local score = redis.call("ZSCORE", KEYS[1], ARGV[3])
    if not score then
      return false
    end
    redis.call("ZREM", KEYS[1], ARGV[3])
    redis.call("ZADD", KEYS[1], score, ARGV[4])
  else
    if redis.call("HGET", KEYS[1], ARGV[2]) ~= ARGV[3] then
      return false
    end
    redis.call("HSET", KEYS[1], ARGV[2], ARGV[4])
  end
  return true
end

if redis.call("TYPE", KEYS[1]).ok ~= kind or not replaced() then
  return "absent"
end
if ARGV[5] ~= "" then
  for i = 2, #KEYS, 2 do
    local old, new = KEYS[i], KEYS[i + 1]
    if redis.call("TYPE", old).ok == "string" and redis.call("GET", old) == ARGV[5] then
      if redis.call("EXISTS", new) == 0 then
        redis.call("RENAME", old, new)  -- keeps its TTL
      else
        redis.call("DEL", old)
      end
    end
  end
end
return "rewritten"
