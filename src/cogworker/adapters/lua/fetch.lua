-- fetch: take up to ARGV[1] jobs, looking at the queues in the order given;
-- each moves atomically from its queue's right end onto the left end of this
-- process's in-progress list, where it stays until its outcome is written.
--
-- shape: KEYS 1 + 1n, ARGV 1
-- KEYS[1]    this process's in-progress list
-- KEYS[2..n] the queues, in the order to look at them
-- ARGV[1]    how many jobs at most
--
-- Returns a flat array: queue position (1 = KEYS[2]), payload, position, payload, ...
need_int(1, 0, MOST)

local wanted = tonumber(ARGV[1]) * 2
local taken = {}
for i = 2, #KEYS do
  while #taken < wanted do
    local job = redis.call("LMOVE", KEYS[i], KEYS[1], "RIGHT", "LEFT")
    if not job then break end
    taken[#taken + 1] = i - 1
    taken[#taken + 1] = job
  end
  if #taken >= wanted then break end
end
return taken
