-- requeue: put every job of a process's in-progress list back at the front
-- (right end) of its own queue, oldest-taken nearest the front.
--
-- Two uses:
-- * recovery (ARGV[1] = "1"): the process is gone. Only if its heartbeat is
--   older than ARGV[2] seconds by Redis's own clock (so clock skew between
--   hosts can't make a live process look dead), which also makes racing
--   reconcilers harmless: the first one empties the list and removes the
--   process, the others find it gone. Each job's orphanings counter goes up;
--   a job orphaned more than ARGV[3] times is parked on the repeat-orphans
--   list instead, to be filed in dead. The process's presence keys go too.
-- * shutdown (ARGV[1] = "0"): the process's own unfinished jobs, no counting.
--
-- KEYS[1] the in-progress list     KEYS[2] the queue registry set
-- KEYS[3] the repeat-orphans list  KEYS[4] the processes set
-- KEYS[5] the process hash         KEYS[6] its workers hash
-- KEYS[7] its memory history    KEYS[8] the beats hash (see beat.lua)
-- ARGV[1] "1" recovery, "0" shutdown
-- ARGV[2] heartbeat age (seconds) past which a process is gone
-- ARGV[3] most orphanings a job may have     ARGV[4] the process's identity
-- ARGV[5] queue key prefix    ARGV[6] orphanings key prefix
-- ARGV[7] TTL of an orphanings counter, seconds
-- ARGV[8] the beat gap (seconds) that means nobody could beat (see beat.lua)
--
-- Returns {requeued, parked}, or {-1, 0} if there is nothing to do: the process
-- is alive after all, or (recovery) another reconciler has already done it.
-- A payload with no readable queue or jid is parked too: nothing is dropped.
local recovery = ARGV[1] == "1"
if recovery then
  if redis.call("SISMEMBER", KEYS[4], ARGV[4]) == 0 and redis.call("EXISTS", KEYS[1]) == 0 then
    return {-1, 0}
  end
  local time = redis.call("TIME")
  local now = tonumber(time[1]) + tonumber(time[2]) / 1000000
  local threshold = tonumber(ARGV[2])
  local beat = tonumber(redis.call("HGET", KEYS[5], "beat"))
  if beat and now - beat < threshold then
    return {-1, 0}
  end
  -- An old heartbeat proves a process gone only while the others keep
  -- beating: not when nobody has beaten for a while (this call waited out a
  -- frozen Redis), nor within a threshold of beats resuming after such a gap.
  local beats = redis.call("HMGET", KEYS[8], "last", "resumed")
  local last, resumed = tonumber(beats[1]), tonumber(beats[2])
  if not last or now - last > tonumber(ARGV[8]) or (resumed and now - resumed < threshold) then
    return {-1, 0}
  end
end
local requeued, parked = 0, 0
for _, raw in ipairs(redis.call("LRANGE", KEYS[1], 0, -1)) do
  local ok, job = pcall(cjson.decode, raw)
  local readable = ok and type(job) == "table" and type(job.queue) == "string"
    and type(job.jid) == "string"
  local park = not readable
  if readable and recovery then
    local key = ARGV[6] .. job.jid
    local count = redis.call("INCR", key)
    redis.call("EXPIRE", key, ARGV[7])
    park = count > tonumber(ARGV[3])
  end
  if park then
    redis.call("RPUSH", KEYS[3], raw)
    parked = parked + 1
  else
    redis.call("RPUSH", ARGV[5] .. job.queue, raw)
    redis.call("SADD", KEYS[2], job.queue)
    requeued = requeued + 1
  end
end
redis.call("DEL", KEYS[1])
if recovery then
  redis.call("DEL", KEYS[5], KEYS[6], KEYS[7])
  redis.call("SREM", KEYS[4], ARGV[4])
end
return {requeued, parked}
