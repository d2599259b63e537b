-- batch_open: a new batch's hash, in the batch's own slot ({b:BID}): when it
-- was opened and its callbacks' payloads.  An open batch's keys expire if it
-- is never closed and settled (a client that died inside its `with` block).
--
-- shape: KEYS 1, ARGV 2 + 2n
-- KEYS[1] the batch's hash
-- ARGV[1] TTL, seconds   ARGV[2] now
-- ARGV[3], ARGV[4], ... field and value pairs: "cb:success", "cb:complete" and the
--         callback's payload
--
-- Returns 1, or 0 if the batch existed already (nothing written).
need_int(1, 1, LONGEST_SECONDS)
need_number(2)
need_groups(3, 2)

if redis.call("EXISTS", KEYS[1]) == 1 then
  return 0
end
redis.call("HSET", KEYS[1], "created_at", ARGV[2], "closed", "0", unpack(ARGV, 3))
redis.call("EXPIRE", KEYS[1], ARGV[1])
return 1
