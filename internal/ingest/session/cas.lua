-- Compare-and-set of visitors' session states: each key is set to its new
-- value only if its current value still begins with the expected tag (the
-- first 8 bytes of the value the new state was computed from; empty when
-- there was no value), and each key set joins the batch's applied set, so
-- that a replay of the batch knows which states it already wrote. It knows
-- nothing of the session rule.
--
-- KEYS: the state keys, then the batch's applied set. ARGV[1]: seconds the
-- states live; ARGV[2]: seconds the applied set lives; then for each state
-- key its expected tag and its new value.
-- Returns the 1-based indexes of the keys whose value had moved on.
local ttl = ARGV[1]
local applied = KEYS[#KEYS]
local moved = {}
local wrote = false
for i = 1, #KEYS - 1 do
  local key = KEYS[i]
  local cur = redis.pcall('GET', key) -- a key of another type reads as no value
  local tag = ''
  if type(cur) == 'string' then tag = string.sub(cur, 1, 8) end
  if tag == ARGV[2 * i + 1] then
    redis.call('SET', key, ARGV[2 * i + 2], 'EX', ttl)
    redis.call('SADD', applied, key)
    wrote = true
  else
    moved[#moved + 1] = i
  end
end
if wrote then redis.call('EXPIRE', applied, ARGV[2]) end
return moved
