-- fetch: take up to ARGV[1] jobs from one queue, unless it is paused; each
-- job moves atomically from the queue's right end onto the left end of this
-- process's in-progress list of that queue, where it stays until its outcome
-- is written.  Every key is in the queue's slot: several queues are several
-- calls (the worker's fetch plan, adapters/jobs/fetch.py).
--
-- A job of a class named in the terms (ARGV[2...]: the classes whose
-- concurrency limit this process knows) whose payload claims that limit
-- takes its place in the same step (_limit_places.lua), or is refused there:
-- either way it is on the in-progress list, and a refused one is put back in
-- the scheduled set by the worker (its wait is domain/key_limits.py's).  Any
-- other job (no claim, a rate limit, a class not in the terms, a payload
-- this script can't read) is left to the worker's own take as it starts.
--
-- shape: KEYS 3, ARGV 1 + 5n
-- KEYS[1]    this process's in-progress list of the queue
-- KEYS[2]    the queue
-- KEYS[3]    its pause flag (a key that exists while the queue is paused),
--            named `cogworker:{q:Q}:paused`: the queue's limit keys are named
--            from it (`cogworker:{q:Q}:limit:...`, in the same slot)
-- ARGV[1]    how many jobs at most
-- then, per class whose places it takes: the class as payloads name it, its
--            limit's name, its max, how long a place lasts unrenewed and the
--            waiting set's horizon (milliseconds)
--
-- Returns a flat array: first {1} if the queue is paused, else {}, then the
-- places looked at (an array of: the job's number in this reply, 1 = the
-- first job; its jid; the key of the place it took, "" if refused), then 1,
-- payload, 1, payload, ... (1: the queue's position, as the caller reads it).
-- uses: _limit_places
need_int(1, 0, MOST)
if #KEYS ~= 3 then
  error({err = "ERR cogworker: " .. #KEYS .. " KEYS, expected 3 (one queue per call)"})
end
local terms, any_term = {}, false
for i = 2, #ARGV, 5 do
  need_name(i)
  need_name(i + 1)
  terms[ARGV[i]] = {
    name = ARGV[i + 1], max = need_int(i + 2, 1, MOST), span = need_int(i + 3, 1, LONGEST_MS),
    horizon = need_int(i + 4, 1, LONGEST_MS),
  }
  any_term = true
end
local FLAG = ":paused"
if string.sub(KEYS[3], -#FLAG) ~= FLAG then
  error({err = "ERR cogworker: KEYS[3] must be a pause flag, ending in " .. FLAG})
end
-- A claim's key as limits take it (key_limits.LONGEST_KEY; longer: the worker's take decides).
local LONGEST_KEY = 200

-- The job's jid, its claim's key and its class's term when its payload claims
-- the concurrency limit its class has in the terms; nil otherwise.
local function claim_of(job)
  if not string.find(job, '"limit"', 1, true) then
    return nil
  end
  local readable, record = pcall(cjson.decode, job)
  if not readable or type(record) ~= "table" then
    return nil
  end
  local term, claim, jid = terms[record.class], record.limit, record.jid
  if not term or type(claim) ~= "table" or type(jid) ~= "string" or jid == "" then
    return nil
  end
  if claim.kind ~= "concurrency" or claim.name ~= term.name then
    return nil
  end
  if type(claim.key) ~= "string" or #claim.key > LONGEST_KEY then
    return nil
  end
  return jid, claim.key, term
end

local now = any_term and limit_now() or 0
local looked = {}

-- Take `job`'s place if it claims one of the terms (its queue's slot named by `flag`).
local function look_at(job, number, flag)
  local jid, key, term = claim_of(job)
  if not jid then
    return
  end
  local slot, tail = string.sub(flag, 1, -#FLAG - 1), ":concurrency:" .. term.name .. ":" .. key
  local holders = slot .. ":limit" .. tail
  local held = take_place(
    holders, slot .. ":limit_waiting" .. tail, "concurrency", jid, term.max, term.span,
    term.horizon, now
  )
  looked[#looked + 1] = number
  looked[#looked + 1] = jid
  looked[#looked + 1] = held and holders or ""
end

local wanted = tonumber(ARGV[1]) * 2 + 2
local paused = {}
local taken = {paused, looked}
if redis.call("EXISTS", KEYS[3]) == 1 then
  paused[1] = 1
  return taken
end
while #taken < wanted do
  local job = redis.call("LMOVE", KEYS[2], KEYS[1], "RIGHT", "LEFT")
  if not job then break end
  taken[#taken + 1] = 1
  taken[#taken + 1] = job
  if any_term then
    look_at(job, #taken / 2 - 1, KEYS[3])
  end
end
return taken
