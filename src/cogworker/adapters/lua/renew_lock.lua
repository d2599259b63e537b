-- renew_lock: a process's heartbeat renews the running lock of a periodic run
-- it is running, only while the lock still names that run's jid: a lock that
-- ran out and was taken by a later run is that run's now.  One call per lock,
-- pipelined right after beat.lua (the lock lives in its run's queue's slot,
-- the beat in the process's).
--
-- shape: KEYS 1, ARGV 2
-- KEYS[1] the running lock   ARGV[1] the jid running   ARGV[2] its TTL, milliseconds
--
-- Returns 1 if renewed, 0 if the lock was gone or someone else's.
need_name(1)
need_int(2, 1, LONGEST_MS)
if redis.call("GET", KEYS[1]) == ARGV[1] then
  return redis.call("PEXPIRE", KEYS[1], ARGV[2])
end
return 0
