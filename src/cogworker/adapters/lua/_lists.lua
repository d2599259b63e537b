-- _lists: a record kept at the head of a capped list with a TTL (a job's
-- attempts, its run history, its class's), and a queue's counters, written by
-- the settling scripts (settle, ack_many, retry_many); scripts.py puts this
-- file in front of them.

-- Push `record` onto `list`, keep its `most` newest, and give it `ttl`
-- seconds.  Trimmed only when too long: a failing job's own lists are short
-- (a retry's commands cost).
local function keep_list(list, record, most, ttl)
  if redis.call("LPUSH", list, record) > tonumber(most) then
    redis.call("LTRIM", list, 0, tonumber(most) - 1)
  end
  redis.call("EXPIRE", list, ttl)
end

-- A batch's runs in their class lists (ack_many, retry_many): each run pushed
-- with `push_class_run`, then `trim_class_runs` trims each list (when too
-- long) and gives it its TTL once, after all its pushes.
local class_lists, class_lengths = {}, {}

local function push_class_run(list, record)
  if not class_lengths[list] then
    class_lists[#class_lists + 1] = list
  end
  class_lengths[list] = redis.call("LPUSH", list, record)
end

local function trim_class_runs(most, ttl)
  for _, list in ipairs(class_lists) do
    if class_lengths[list] > tonumber(most) then
      redis.call("LTRIM", list, 0, tonumber(most) - 1)
    end
    redis.call("EXPIRE", list, ttl)
  end
end

-- Add `count` to a queue's counter in total and today's; today's gets its TTL
-- when this call created it.
local function count_ended(total, today, count, ttl)
  redis.call("INCRBY", total, count)
  if redis.call("INCRBY", today, count) == count then
    redis.call("EXPIRE", today, ttl)
  end
end
