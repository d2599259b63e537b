-- _lists: a record kept at the head of a capped list with a TTL (a job's
-- attempts, its run history, its class's), written by the settling scripts
-- (settle, retry_many); scripts.py puts this file in front of them.

-- Push `record` onto `list`, keep its `most` newest, and give it `ttl`
-- seconds.  Trimmed only when too long: a failing job's own lists are short
-- (a retry's commands cost).
local function keep_list(list, record, most, ttl)
  if redis.call("LPUSH", list, record) > tonumber(most) then
    redis.call("LTRIM", list, 0, tonumber(most) - 1)
  end
  redis.call("EXPIRE", list, ttl)
end
