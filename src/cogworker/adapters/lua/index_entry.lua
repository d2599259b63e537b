-- index_entry: one entry of a queue's scheduled, retry or dead set noted in
-- the queue's jid index of the sets (`cogworker migrate`, the layout step
-- building the index for the entries filed before it: see _located.lua), only
-- while it is still in its set: an entry taken off meanwhile is left out, so
-- the index names exactly what the sets hold.  Writing it again writes the
-- same: a run cut short is finished by running it again.
--
-- shape: KEYS 2, ARGV 2
-- uses: _located
-- KEYS[1] the set   KEYS[2] its queue's jid index of the sets
-- ARGV[1] the entry as stored   ARGV[2] its jid
--
-- Returns "indexed", or "absent" (nothing written).
need_text(1)
need_name(2)

local score = redis.call("ZSCORE", KEYS[1], ARGV[1])
if not score then
  return "absent"
end
located_add(KEYS[2], ARGV[2], set_name(KEYS[1]), score)
return "indexed"
