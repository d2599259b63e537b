-- pop: basic fetch's batch. Take up to ARGV[1] jobs outright from one queue
-- (no in-progress list: a job popped here is lost if its process dies before
-- it ends), unless it is paused.  Several queues are several calls, in the
-- queues' slots (the fetch plan, adapters/jobs/fetch.py).
--
-- shape: KEYS 2, ARGV 1
-- KEYS[1]    the queue   KEYS[2] its pause flag (exists while it is paused)
-- ARGV[1]    how many jobs at most
--
-- Returns a flat array: first {1} if the queue is paused, else {}, then 1,
-- payload, 1, payload, ... (as fetch.lua).
need_int(1, 0, MOST)
if #KEYS ~= 2 then
  error({err = "ERR cogworker: " .. #KEYS .. " KEYS, expected 2 (one queue per call)"})
end

local taken = {{}}
if redis.call("EXISTS", KEYS[2]) == 1 then
  taken[1][1] = 1
  return taken
end
local jobs = tonumber(ARGV[1]) > 0 and redis.call("RPOP", KEYS[1], ARGV[1])
if jobs then
  for _, job in ipairs(jobs) do
    taken[#taken + 1] = 1
    taken[#taken + 1] = job
  end
end
return taken
