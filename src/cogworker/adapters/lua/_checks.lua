-- _checks: the argument checks every script runs before its first write.
-- scripts.py puts this file in front of each script's own text.  Lua doesn't
-- roll back: a command that fails after a write (PEXPIRE with a TTL Redis
-- can't hold, ZADD with a NaN score) would leave half a move behind, so a
-- script checks what it will hand to Redis first and writes nothing when an
-- argument is wrong.
--
-- A failed check raises "ERR cogworker: ARGV[i] ...", naming the argument.

-- The longest TTL or delay a script accepts: a hundred years, far inside
-- what Redis's millisecond clock can add (the same as retries.LONGEST_DELAY).
local LONGEST_SECONDS = 3155760000
local LONGEST_MS = LONGEST_SECONDS * 1000
-- Counts and indexes: anything a Lua number holds exactly.
local MOST = 9007199254740991

local function refuse(i, what)
  local given = ARGV[i] == nil and "nothing" or string.format("%q", string.sub(ARGV[i], 1, 40))
  error({err = "ERR cogworker: ARGV[" .. i .. "] is " .. given .. ", expected " .. what})
end

-- An argument that must be present (any text).
local function need_text(i)
  if ARGV[i] == nil then
    refuse(i, "an argument")
  end
  return ARGV[i]
end

-- An argument that must be non-empty (a name, a jid, an entry).
local function need_name(i)
  if ARGV[i] == nil or ARGV[i] == "" then
    refuse(i, "a non-empty text")
  end
  return ARGV[i]
end

-- A whole number written in digits, in [low, high].
local function need_int(i, low, high)
  local text = ARGV[i]
  local n = text and string.match(text, "^%-?%d+$") and tonumber(text)
  if not n or n < low or n > high then
    refuse(i, "a whole number in [" .. low .. ", " .. string.format("%.0f", high) .. "]")
  end
  return n
end

-- A finite number (a score, a time), within a hundred years' milliseconds of 0
-- either way, so "(" .. it and ZADD take it as Redis reads it.
local function need_number(i)
  -- Digits, sign, point and exponent only: Lua's tonumber also takes " 5" and
  -- "0x10", which Redis's own number parsing refuses after a write.
  local text = ARGV[i]
  local n = text and string.match(text, "^[%d%.eE%+%-]+$") and tonumber(text)
  if not n or n ~= n or n > LONGEST_MS or n < -LONGEST_MS then
    refuse(i, "a finite number")
  end
  return n
end

-- One of the given words.
local function need_choice(i, ...)
  for _, choice in ipairs({...}) do
    if ARGV[i] == choice then
      return choice
    end
  end
  refuse(i, "one of: " .. table.concat({...}, ", "))
end

-- The ARGV from `first` on come in groups of `size`.
local function need_groups(first, size)
  if #ARGV < first - 1 or (#ARGV - first + 1) % size ~= 0 then
    error({err = "ERR cogworker: " .. (#ARGV - first + 1) .. " arguments from ARGV["
      .. first .. "] on, expected groups of " .. size})
  end
end

