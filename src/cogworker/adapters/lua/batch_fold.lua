-- batch_fold: fold one event of a batch into its state, in the batch's slot.
-- An event is a member's final outcome (appended by the settling script with
-- that outcome) or the batch's closing.  Idempotent: a member counts once, at
-- its first final outcome (the settled set remembers it), and a second close
-- changes nothing; a jid that isn't a member (a job whose push a middleware
-- stopped) counts nothing.  What is due then is decided by the caller
-- (domain/batches.py) from the state this returns.
--
-- shape: KEYS 3, ARGV 3
-- KEYS[1] the batch's hash   KEYS[2] its members   KEYS[3] its settled members
-- ARGV[1] the member's jid (any text for a close)
-- ARGV[2] "ack", "dead", "discard", "cancel", "expire", or "close"
-- ARGV[3] TTL of the batch's keys, seconds (renewed while events come)
--
-- Returns the hash as field, value, ... (empty: no such batch, or it expired).
need_name(1)
need_choice(2, "ack", "dead", "discard", "cancel", "expire", "close")
need_int(3, 1, LONGEST_SECONDS)

if redis.call("EXISTS", KEYS[1]) == 0 then
  return {}
end
if ARGV[2] == "close" then
  if redis.call("HGET", KEYS[1], "closed") ~= "1" then
    redis.call("HSET", KEYS[1], "closed", "1", "total", redis.call("SCARD", KEYS[2]))
  end
elseif redis.call("SISMEMBER", KEYS[2], ARGV[1]) == 1
    and redis.call("SADD", KEYS[3], ARGV[1]) == 1 then
  redis.call("HINCRBY", KEYS[1], "f:" .. ARGV[2], 1)
end
-- Renewed only while the batch isn't finished: a finished one's TTL is its retention.
if redis.call("HEXISTS", KEYS[1], "finished") == 0 then
  for _, key in ipairs(KEYS) do
    redis.call("EXPIRE", key, ARGV[3])
  end
end
return redis.call("HGETALL", KEYS[1])
