-- Compare-and-set of visitors' session states: each key is set to its new
-- value only if its current value still begins with the expected tag (the
-- first 8 bytes of the value the new state was computed from; empty when
-- there was no value). It knows nothing of the session rule.
--
-- KEYS: the state keys. ARGV[1]: seconds the states live; then for each key
-- its expected tag and its new value.
-- Returns the 1-based indexes of the keys whose value had moved on.
local ttl = ARGV[1]
local moved = {}
for i, key in ipairs(KEYS) do
  local cur = redis.pcall('GET', key) -- a key of another type reads as no value
  local tag = ''
  if type(cur) == 'string' then tag = string.sub(cur, 1, 8) end
  if tag == ARGV[2 * i] then
    redis.call('SET', key, ARGV[2 * i + 1], 'EX', ttl)
  else
    moved[#moved + 1] = i
  end
end
return moved
