-- _tallies: per-class metrics (domain/class_metrics.py) that the settling
-- scripts (settle, ack_many) add their runs to; scripts.py puts this file in
-- front of them.  A run counts in its class's minute, hour and total hashes,
-- all in its queue's slot: fields t (execution time, microseconds), f
-- (failures) and one per histogram bucket, named by its index, counting its
-- runs (their sum is the runs: no field of its own to write).  Its class
-- is scored by the run's time in its queue's registry of classes.
--
-- A script collects its runs with `tally_run`, then `write_tallies` writes
-- each hash once: one HINCRBY per field, however many runs the call holds.
-- A minute's or an hour's hash gets its TTL when created; the total hash's
-- TTL and the class's registry entry are refreshed only when the shell asks
-- (once a minute per process and class): commands on the ack's hot path cost.
-- The shell names every key (they come in KEYS).

local tallied, tallied_order = {}, {}
local refreshed, refreshed_order = {}, {}
local registries, registries_order = {}, {}

local function tally_field(key, field, n)
  local fields = tallied[key]
  if not fields then
    fields = {}
    tallied[key] = fields
    tallied_order[#tallied_order + 1] = key
  end
  fields[field] = (fields[field] or 0) + n
end

-- One run of `class`: its minute, hour and total hashes, its queue's registry
-- of classes, its time (microseconds), its bucket, "1" if it failed, and "1"
-- to refresh its total's TTL and its registry entry.
local function tally_run(minute, hour, total, registry, class, micros, bucket, failed, refresh)
  for _, key in ipairs({minute, hour, total}) do
    tally_field(key, "t", tonumber(micros))
    tally_field(key, bucket, 1)
    if failed == "1" then
      tally_field(key, "f", 1)
    end
  end
  if refresh ~= "1" or refreshed[total] then
    return
  end
  refreshed[total] = true
  refreshed_order[#refreshed_order + 1] = total
  local classes = registries[registry]
  if not classes then
    classes = {}
    registries[registry] = classes
    registries_order[#registries_order + 1] = registry
  end
  classes[class] = true
end

-- Write what was collected at `now`: a minute's or an hour's hash expires
-- `ttl` seconds after its first run, a total hash and a class's registry
-- entry `ttl` after their last refresh.
local function write_tallies(now, ttl)
  for _, key in ipairs(tallied_order) do
    local fields = tallied[key]
    -- Its time is what this call added: the call created it (or every run so far
    -- took 0 us, and the TTL is set again: harmless).
    if redis.call("HINCRBY", key, "t", fields.t) == fields.t then
      redis.call("EXPIRE", key, ttl)
    end
    -- In any order: additions commute.
    for field, n in pairs(fields) do
      if field ~= "t" then
        redis.call("HINCRBY", key, field, n)
      end
    end
  end
  for _, total in ipairs(refreshed_order) do
    redis.call("EXPIRE", total, ttl)
  end
  for _, registry in ipairs(registries_order) do
    for class in pairs(registries[registry]) do
      redis.call("ZADD", registry, now, class)
    end
    redis.call("ZREMRANGEBYSCORE", registry, "-inf", "(" .. (tonumber(now) - tonumber(ttl)))
    redis.call("EXPIRE", registry, ttl)
  end
end

-- The checks of a run's figures at ARGV[i] (its time, or "" when the run isn't
-- counted), ARGV[i + 1] (its bucket) and ARGV[i + 2] (refresh: "1" or "0").
local function need_run_figures(i)
  if ARGV[i] ~= "" then
    need_int(i, 0, MOST)
    need_int(i + 1, 0, MOST)
    need_choice(i + 2, "0", "1")
  end
end
