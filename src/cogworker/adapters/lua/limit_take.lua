-- limit_take: a job about to run takes its place under a per-key limit, or
-- is refused (see _limit_places.lua).  Every key is in the job's queue's slot.
--
-- shape: KEYS 2, ARGV 5
-- KEYS[1] the limit's key (holders or starts)   KEYS[2] its waiting set
-- ARGV[1] "concurrency" or "rate"   ARGV[2] the jid   ARGV[3] max
-- ARGV[4] concurrency: how long a place lasts unrenewed; rate: the window
--         (milliseconds)
-- ARGV[5] the waiting set's horizon, milliseconds
--
-- Returns {1, 0} if the job took a place, {0, ms} if refused: ms is how long
-- until a rate's window frees a place (0 for a concurrency limit: unknown).
-- uses: _limit_places
need_choice(1, "concurrency", "rate")
need_name(2)
need_int(3, 1, MOST)
need_int(4, 1, LONGEST_MS)
need_int(5, 1, LONGEST_MS)

local taken, free_in = take_place(
  KEYS[1], KEYS[2], ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4]),
  tonumber(ARGV[5]), limit_now()
)
return {taken and 1 or 0, free_in}
