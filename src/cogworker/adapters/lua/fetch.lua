-- fetch: take up to ARGV[1] jobs, looking at the queues in the order given and
-- skipping the paused ones; each job moves atomically from its queue's right
-- end onto the left end of this process's in-progress list, where it stays
-- until its outcome is written.
--
-- shape: KEYS 1 + 2n, ARGV 1
-- KEYS[1]    this process's in-progress list
-- then, per queue in the order to look at them: the queue, its pause flag
--            (a key that exists while the queue is paused)
-- ARGV[1]    how many jobs at most
--
-- Returns a flat array: first the positions of the paused queues (an array,
-- 1 = the first queue; empty when none is), then queue position, payload,
-- position, payload, ...  Every flag is read, even once the batch is full:
-- the caller learns the pause of each queue it named from this one reply.
need_int(1, 0, MOST)

local wanted = tonumber(ARGV[1]) * 2 + 1
local paused = {}
local taken = {paused}
for i = 2, #KEYS, 2 do
  local position = i / 2
  if redis.call("EXISTS", KEYS[i + 1]) == 1 then
    paused[#paused + 1] = position
  else
    while #taken < wanted do
      local job = redis.call("LMOVE", KEYS[i], KEYS[1], "RIGHT", "LEFT")
      if not job then break end
      taken[#taken + 1] = position
      taken[#taken + 1] = job
    end
  end
end
return taken
