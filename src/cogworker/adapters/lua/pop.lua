-- pop: basic fetch's batch. Take up to ARGV[1] jobs outright (no in-progress
-- list: a job popped here is lost if its process dies before it ends),
-- looking at the queues in the order given.
--
-- shape: KEYS 0 + 1n, ARGV 1
-- KEYS[1..n] the queues, in the order to look at them
-- ARGV[1]    how many jobs at most
--
-- Returns a flat array: queue position (1 = KEYS[1]), payload, ...
need_int(1, 0, MOST)

local wanted = tonumber(ARGV[1])
local taken = {}
for i = 1, #KEYS do
  local left = wanted - #taken / 2
  if left <= 0 then break end
  local jobs = redis.call("RPOP", KEYS[i], left)
  if jobs then
    for _, job in ipairs(jobs) do
      taken[#taken + 1] = i
      taken[#taken + 1] = job
    end
  end
end
return taken
