-- _located: the jid index of a queue's scheduled, retry and dead sets,
-- `cogworker:{q:Q}:located` (adapters/located.py, docs/dashboard.md "Go to
-- jid"): a hash, jid -> "SET SCORE", the set's name (schedule, retry or
-- dead) and the entry's score, written and deleted by every script that adds
-- an entry to those sets or takes one off, in the same step and the same
-- slot, so it names exactly what the sets hold.  scripts.py puts this file in
-- front of the scripts that say they use it.

-- The entry's score as the index holds it: 17 significant digits, which read
-- back as the very same double (Python's "%.17g" writes it alike).
local function located_value(name, score)
  return name .. " " .. string.format("%.17g", tonumber(score))
end

-- `jid`'s entry is in the set `name` of the index `hash`'s queue, at `score`.
local function located_add(hash, jid, name, score)
  if jid ~= "" then
    redis.call("HSET", hash, jid, located_value(name, score))
  end
end

-- `jid`'s entry left the set `name`: its index entry goes, unless it names
-- another set (the jid was filed there since: that entry is the one to keep).
local function located_drop(hash, jid, name)
  local at = jid ~= "" and redis.call("HGET", hash, jid)
  if at and string.sub(at, 1, #name + 1) == name .. " " then
    redis.call("HDEL", hash, jid)
  end
end

-- The name of a queue's set `key` (redis_keys.sorted_set: its last segment).
local function set_name(key)
  return string.match(key, ":([%a_]+)$") or ""
end

-- The jid a set's member names (its payload's "jid"), or "" for one that isn't
-- a job's payload (never indexed).
local function jid_of(member)
  local ok, record = pcall(cjson.decode, member)
  if ok and type(record) == "table" and type(record.jid) == "string" then
    return record.jid
  end
  return ""
end

-- Trim the dead set `dead` (index `hash`): entries scored below `below` go,
-- and past the `most` newest, the oldest; each one's index entry with it.
local function trim_dead(dead, hash, below, most)
  local old = redis.call("ZRANGEBYSCORE", dead, "-inf", "(" .. below)
  for _, member in ipairs(old) do
    located_drop(hash, jid_of(member), "dead")
  end
  if #old > 0 then
    redis.call("ZREMRANGEBYSCORE", dead, "-inf", "(" .. below)
  end
  local over = redis.call("ZCARD", dead) - tonumber(most)
  if over > 0 then
    for _, member in ipairs(redis.call("ZRANGE", dead, 0, over - 1)) do
      located_drop(hash, jid_of(member), "dead")
    end
    redis.call("ZREMRANGEBYRANK", dead, 0, over - 1)
  end
end
