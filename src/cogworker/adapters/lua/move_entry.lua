-- move_entry: one entry of a sorted set or list of an older layout moved to
-- the key it goes to in the next (`cogworker migrate`, layout step 8: the
-- scheduled, retry and dead sets kept for all queues, to the set of the queue
-- each entry names; layout step 9: likewise the hand-over and parking lists;
-- layout step 10: a process's in-progress list to its list of each queue;
-- `domain/layout_splits.py`), so it is in one key or the other at every
-- moment, never both, never neither.  The older layout ran on one node only:
-- the two keys may be in different slots.
--
-- A sorted set's member keeps its score.  A list's entry is moved only from
-- the old list's left end (the oldest) to the new list's right end, so the
-- entries of one queue keep their order, and an entry the list holds twice
-- is moved once per call.
--
-- A sorted set's member is noted in its new set's queue's jid index of the
-- sets (see _located.lua) in the same step.
--
-- shape: KEYS 3, ARGV 2
-- uses: _located
-- KEYS[1] the old set or list   KEYS[2] the one the entry goes to
-- KEYS[3] a sorted set's: its queue's jid index of the sets; a list's: unused
-- ARGV[1] the entry   ARGV[2] the old key's type: "zset" or "list"
--
-- Returns "moved", or "absent": the entry isn't in the old set (or at the
-- old list's left end): moved by a run before, or never there; nothing is
-- written then.
need_text(1)
local kind = need_choice(2, "zset", "list")

if redis.call("TYPE", KEYS[1]).ok ~= kind then
  return "absent"
end
if kind == "list" then
  if redis.call("LINDEX", KEYS[1], 0) ~= ARGV[1] then
    return "absent"
  end
  redis.call("RPUSH", KEYS[2], ARGV[1])
  redis.call("LPOP", KEYS[1])
  return "moved"
end
local score = redis.call("ZSCORE", KEYS[1], ARGV[1])
if not score then
  return "absent"
end
redis.call("ZADD", KEYS[2], score, ARGV[1])
located_add(KEYS[3], jid_of(ARGV[1]), set_name(KEYS[2]), score)
redis.call("ZREM", KEYS[1], ARGV[1])
return "moved"
