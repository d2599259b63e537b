-- batch_join: register jobs as members of a batch before they are pushed, in
-- the batch's slot; refused once the batch is closed (its count is taken then).
--
-- shape: KEYS 2, ARGV 1 + 1n
-- KEYS[1] the batch's hash   KEYS[2] its members (a set of jids)
-- ARGV[1] TTL, seconds   ARGV[2], ... the jids
--
-- Returns 1 if they joined, 0 if the batch is closed, -1 if there is no such batch.
need_int(1, 1, LONGEST_SECONDS)
for i = 2, #ARGV do
  need_name(i)
end
if #ARGV < 2 then
  refuse(2, "a jid")
end

local closed = redis.call("HGET", KEYS[1], "closed")
if not closed then
  return -1
end
if closed == "1" then
  return 0
end
redis.call("SADD", KEYS[2], unpack(ARGV, 2))
redis.call("EXPIRE", KEYS[2], ARGV[1])
return 1
