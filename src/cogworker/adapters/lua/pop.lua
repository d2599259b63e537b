-- pop: basic fetch's batch. Take up to ARGV[1] jobs outright (no in-progress
-- list: a job popped here is lost if its process dies before it ends),
-- looking at the queues in the order given and skipping the paused ones.
--
-- shape: KEYS 0 + 2n, ARGV 1
-- KEYS[1], KEYS[2], ...: per queue in the order to look at them, the queue,
--            then its pause flag (a key that exists while the queue is paused)
-- ARGV[1]    how many jobs at most
--
-- Returns a flat array: first the positions of the paused queues (an array,
-- 1 = the first queue; empty when none is), then queue position, payload, ...
-- Every flag is read, even once the batch is full (as fetch.lua).
need_int(1, 0, MOST)

local wanted = tonumber(ARGV[1])
local paused = {}
local taken = {paused}
for i = 1, #KEYS, 2 do
  local position = (i + 1) / 2
  if redis.call("EXISTS", KEYS[i + 1]) == 1 then
    paused[#paused + 1] = position
  else
    local left = wanted - (#taken - 1) / 2
    if left > 0 then
      local jobs = redis.call("RPOP", KEYS[i], left)
      if jobs then
        for _, job in ipairs(jobs) do
          taken[#taken + 1] = position
          taken[#taken + 1] = job
        end
      end
    end
  end
end
return taken
