-- probe: what a worker needs of Redis, tried once before it starts: running
-- scripts by SHA (EVALSHA, SCRIPT LOAD) and writing cogworker's keys.  It
-- changes nothing: a DEL of a key never written needs the write permission
-- and deletes nothing.
--
-- shape: KEYS 1, ARGV 0
-- KEYS[1] a cogworker key never written
--
-- Returns 0.
return redis.call("DEL", KEYS[1])
