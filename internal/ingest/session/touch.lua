-- Applies one event to a visitor's session and returns {previous, next}:
-- previous is false when the event starts a new session. Each state is the
-- list sid, start, last, version, pageviews, events, entry, exit,
-- last_pageview, attribution (all strings).
--
-- KEYS[1] the session key
-- ARGV: now, idle seconds, max age seconds, is_pageview (0/1), path,
--       new session id, attribution JSON, key TTL seconds
local key = KEYS[1]
local now = tonumber(ARGV[1])
local idle = tonumber(ARGV[2])
local max_age = tonumber(ARGV[3])
local is_pageview = ARGV[4] == '1'
local path = ARGV[5]
local fields = {'sid', 'start', 'last', 'ver', 'pv', 'ev', 'entry', 'exit', 'lpv', 'attrs'}

local prev = redis.call('HMGET', key, unpack(fields))
local alive = false
if prev[1] then
  local start = tonumber(prev[2])
  local last = tonumber(prev[3])
  -- instances' clocks differ slightly: a session never goes back in time
  if now < last then now = last end
  alive = (now - last) <= idle and (now - start) < max_age
end

local next
if alive then
  next = {prev[1], prev[2], tostring(now), tostring(tonumber(prev[4]) + 1),
          prev[5], prev[6], prev[7], prev[8], prev[9], prev[10]}
else
  prev = false
  next = {ARGV[6], tostring(now), tostring(now), '1', '0', '0', '', '', '0', ARGV[7]}
end

if is_pageview then
  next[5] = tostring(tonumber(next[5]) + 1)
  if next[7] == '' then next[7] = path end
  next[8] = path
  next[9] = tostring(now)
else
  next[6] = tostring(tonumber(next[6]) + 1)
end

local kv = {}
for i, f in ipairs(fields) do
  kv[#kv + 1] = f
  kv[#kv + 1] = next[i]
end
redis.call('HSET', key, unpack(kv))
redis.call('EXPIRE', key, tonumber(ARGV[8]))
return {prev, next}
