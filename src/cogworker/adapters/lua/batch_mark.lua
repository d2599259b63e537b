-- batch_mark: note in the batch's slot that a callback was pushed, and (once
-- nothing is left to happen) that the batch is finished: its keys then
-- expire after the retention given.
--
-- shape: KEYS 3, ARGV 3
-- KEYS[1] the batch's hash   KEYS[2] its members   KEYS[3] its settled members
-- ARGV[1] "success" or "complete" (the callback pushed), or "" for none
-- ARGV[2] "1" if the batch is finished, else "0"   ARGV[3] retention, seconds
--
-- Returns 1, or 0 if there is no such batch.
need_choice(1, "success", "complete", "")
need_choice(2, "0", "1")
need_int(3, 1, LONGEST_SECONDS)

if redis.call("EXISTS", KEYS[1]) == 0 then
  return 0
end
if ARGV[1] ~= "" then
  redis.call("HSET", KEYS[1], "fired:" .. ARGV[1], "1")
end
if ARGV[2] == "1" and redis.call("HSETNX", KEYS[1], "finished", "1") == 1 then
  for _, key in ipairs(KEYS) do
    redis.call("EXPIRE", key, ARGV[3])
  end
end
return 1
