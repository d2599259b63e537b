-- move_key: one key of an older layout moved whole to its name in the next
-- (`cogworker migrate`), so it is under one name or the other at every
-- moment, never both, never neither.  Found under both names (a process of
-- the older release wrote the old one after a migration), it is merged into
-- the new one, whose content wins: a hash gains the fields it lacks, a set
-- the members, a sorted set the members with their scores; a list's entries
-- go to the new list's left end in their order (the end a push writes: a
-- straggler's jobs wait behind the others); a string keeps its value, unless
-- ARGV[1] is "add" and both hold whole numbers: then the old one's is added
-- (a counter a straggler went on counting; the new key keeps its TTL).  Then
-- the old key goes.
--
-- shape: KEYS 2, ARGV 2
-- KEYS[1] the key's old name   KEYS[2] its new name
-- ARGV[1] the Redis type to move ("": any); a key of another type under the
--         old name is another family's (the older layout named a queue's list
--         and a marker alike), left where it is
-- ARGV[2] "keep" or "add": how two strings merge (domain/layout.py, `Merge`)
--
-- Returns "absent" (no old key of that type: moved already, or never
-- written), "renamed" or "merged".
local wanted = need_choice(1, "", "string", "hash", "list", "set", "zset")
local add = need_choice(2, "keep", "add") == "add"
local kind = redis.call("TYPE", KEYS[1]).ok
if kind == "none" or (wanted ~= "" and kind ~= wanted) then
  return "absent"
end
local there = redis.call("TYPE", KEYS[2]).ok
if there == "none" then
  redis.call("RENAME", KEYS[1], KEYS[2])
  return "renamed"
end
-- Checked before the first write: Lua doesn't roll back.
if there ~= kind or kind == "stream" then
  error({err = "ERR cogworker: can't merge " .. KEYS[1] .. " (" .. kind .. ") into "
    .. KEYS[2] .. " (" .. there .. ")"})
end
local function whole(value)
  return string.match(value, "^-?%d+$") ~= nil and #value <= 18
end
if kind == "string" and add then
  local old, new = redis.call("GET", KEYS[1]), redis.call("GET", KEYS[2])
  if whole(old) and whole(new) then
    redis.call("INCRBY", KEYS[2], old)
  end
elseif kind == "hash" then
  local fields = redis.call("HGETALL", KEYS[1])
  for i = 1, #fields, 2 do
    redis.call("HSETNX", KEYS[2], fields[i], fields[i + 1])
  end
elseif kind == "set" then
  for _, member in ipairs(redis.call("SMEMBERS", KEYS[1])) do
    redis.call("SADD", KEYS[2], member)
  end
elseif kind == "zset" then
  local entries = redis.call("ZRANGE", KEYS[1], 0, -1, "WITHSCORES")
  for i = 1, #entries, 2 do
    redis.call("ZADD", KEYS[2], "NX", entries[i + 1], entries[i])
  end
elseif kind == "list" then
  while redis.call("LMOVE", KEYS[1], KEYS[2], "RIGHT", "LEFT") do
  end
end
redis.call("DEL", KEYS[1])
return "merged"
