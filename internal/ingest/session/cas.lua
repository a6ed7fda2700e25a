-- Compare-and-set of visitors' session states. A state is a field
-- (site:visitor) of a time bucket, a hash of the states written in its
-- quarter of an hour; a state's current value is the one of the newest
-- bucket holding its field. Each field is set to its new value only if its
-- current value still begins with the expected tag (the first 8 bytes of the
-- value the new state was computed from; empty when there was no value), and
-- each field set joins the batch's applied set, so that a replay of the
-- batch knows which states it already wrote. It knows nothing of the
-- session rule. A few commands per call, however many visitors.
--
-- KEYS: the buckets, newest first, then the batch's applied set. ARGV[1]:
-- the index (in KEYS) of the bucket that new values go to, unless the
-- current one is newer; ARGV[2]: seconds a bucket lives after a write;
-- ARGV[3]: seconds the applied set lives; then for each state its field,
-- expected tag and new value.
-- Returns the 1-based indexes of the states whose value had moved on.
local buckets = #KEYS - 1
local applied = KEYS[#KEYS]
local target = tonumber(ARGV[1])
local fields = {}
for i = 4, #ARGV, 3 do fields[#fields + 1] = ARGV[i] end

-- Each bucket is asked only for the fields no newer bucket holds, and a
-- bucket that does not exist (the next one, mostly) not at all.
local cur, at = {}, {}
local left = {}
for j = 1, #fields do left[j] = j end
for b = 1, buckets do
  if #left == 0 then break end
  if redis.call('EXISTS', KEYS[b]) == 1 then
    local names = {}
    for k = 1, #left do names[k] = fields[left[k]] end
    local vals = redis.call('HMGET', KEYS[b], unpack(names))
    local still = {}
    for k = 1, #left do
      if vals[k] then
        cur[left[k]], at[left[k]] = vals[k], b
      else
        still[#still + 1] = left[k]
      end
    end
    left = still
  end
end

local writes, members, moved = {}, {}, {}
for j = 1, #fields do
  local tag = ''
  if cur[j] then tag = string.sub(cur[j], 1, 8) end
  if tag == ARGV[3 * j + 2] then
    local b = target
    if at[j] and at[j] < b then b = at[j] end -- a state never moves to an older bucket
    writes[b] = writes[b] or {}
    local w = writes[b]
    w[#w + 1] = fields[j]
    w[#w + 1] = ARGV[3 * j + 3]
    members[#members + 1] = fields[j]
  else
    moved[#moved + 1] = j
  end
end
for b, w in pairs(writes) do
  redis.call('HSET', KEYS[b], unpack(w))
  redis.call('EXPIRE', KEYS[b], ARGV[2])
end
if #members > 0 then
  redis.call('SADD', applied, unpack(members))
  redis.call('EXPIRE', applied, ARGV[3])
end
return moved
