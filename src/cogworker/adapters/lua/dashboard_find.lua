-- dashboard_find: the entries of a range of a list that contain a text, for
-- the dashboard's job page ("is this jid still enqueued?"). Read-only; the
-- range bounds the cost, and the caller checks each hit by decoding it (the
-- text is only a cheap first sieve).
--
-- shape: KEYS 1, ARGV 3
-- KEYS[1] the list
-- ARGV[1] the text to look for (plain, not a pattern)
-- ARGV[2] the first index   ARGV[3] the last index (LRANGE's)
--
-- Returns the matching entries, in list order.
local found = {}
for _, entry in ipairs(redis.call("LRANGE", KEYS[1], ARGV[2], ARGV[3])) do
  if string.find(entry, ARGV[1], 1, true) then
    found[#found + 1] = entry
  end
end
return found
