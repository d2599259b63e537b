-- _results: a job's kept result (domain/results.py), written by the scripts
-- that end a job (settle, ack_many, cancel, bury) in the same step as its end, in
-- its queue's slot.  scripts.py puts this file in front of them.  The record
-- is a list of one element: a waiter's BLMOVE of the key onto itself reads
-- it without taking it (adapters/results.py), and is woken by its write.

-- `ttl` "0": the job keeps no result, nothing is done.  Else the record it
-- may have from an earlier end (a dead job retried by hand) is dropped, and
-- `record`, unless "" (a retry: not ended yet), is kept `ttl` seconds.
local function keep_result(key, record, ttl)
  if ttl == "0" then
    return
  end
  redis.call("DEL", key)
  if record ~= "" then
    redis.call("RPUSH", key, record)
    redis.call("EXPIRE", key, ttl)
  end
end

-- The checks of a result at ARGV[i] (its record, or "") and ARGV[i + 1] (its TTL, or "0").
local function need_result(i)
  need_text(i)
  need_int(i + 1, 0, LONGEST_SECONDS)
end
