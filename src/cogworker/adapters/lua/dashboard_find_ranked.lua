-- dashboard_find_ranked: the entries of a range of ranks of a sorted set that
-- contain a text, each with its score and its place among the entries
-- sharing that score, for the dashboard's search by jid. Read-only; the range
-- bounds the cost (ZRANGE by rank: O(log N + its count); two O(log N) calls
-- per hit), and the caller checks each hit by decoding it (the text is only
-- a cheap first sieve, as in dashboard_find).
--
-- shape: KEYS 1, ARGV 4
-- KEYS[1] the sorted set
-- ARGV[1] the text to look for (plain, not a pattern)
-- ARGV[2] the first rank   ARGV[3] the last rank
-- ARGV[4] "1": ranks count from the highest score (the walk order of a page
--         listing the newest first), "0": from the lowest
--
-- Returns member, score, tie for each match, flat, in rank order; a tie is
-- the entry's rank minus the rank of the first entry with its score.
local descending = ARGV[4] == "1"
local first = tonumber(ARGV[2])
local range = descending and "ZREVRANGE" or "ZRANGE"
local found = {}
for offset, entry in ipairs(redis.call(range, KEYS[1], ARGV[2], ARGV[3])) do
  if string.find(entry, ARGV[1], 1, true) then
    local score = redis.call("ZSCORE", KEYS[1], entry)
    local before
    if descending then
      before = redis.call("ZCOUNT", KEYS[1], "(" .. score, "+inf")
    else
      before = redis.call("ZCOUNT", KEYS[1], "-inf", "(" .. score)
    end
    found[#found + 1] = entry
    found[#found + 1] = score
    found[#found + 1] = first + offset - 1 - before
  end
end
return found
