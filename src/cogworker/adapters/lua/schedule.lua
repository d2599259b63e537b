-- schedule: jobs into a queue's scheduled set, each noted in the queue's jid
-- index of the sets (see _located.lua) in the same step.  The caller registers
-- the queue's part before (see adapters/jobs/enqueue.py).
--
-- shape: KEYS 2, ARGV 0 + 3n
-- uses: _located
-- KEYS[1] the queue's scheduled set   KEYS[2] its jid index of the sets
-- ARGV[3i-2] .. ARGV[3i] for the i-th job: when to run it, its payload, its jid
--
-- Returns how many entries were new (ZADD's count).
need_groups(1, 3)
for i = 1, #ARGV, 3 do
  need_number(i)
  need_text(i + 1)
  need_text(i + 2)
end

local added = 0
for i = 1, #ARGV, 3 do
  added = added + redis.call("ZADD", KEYS[1], ARGV[i], ARGV[i + 1])
  located_add(KEYS[2], ARGV[i + 2], "schedule", ARGV[i])
end
return added
