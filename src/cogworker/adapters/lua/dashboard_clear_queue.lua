-- dashboard_clear_queue: the dashboard's "clear queue". Deletes the queue's
-- list and drops it from the registry in one step, so a worker never sees a
-- registered queue whose jobs are half gone.
--
-- KEYS[1] the queue   KEYS[2] the queue registry set
-- ARGV[1] the queue name
--
-- Returns how many jobs were deleted (0 if the queue was already empty or gone).
need_name(1)

local size = redis.call("LLEN", KEYS[1])
redis.call("DEL", KEYS[1])
redis.call("SREM", KEYS[2], ARGV[1])
return size
