-- Applies one event to a visitor's session and returns {previous, next}:
-- previous is false when the event starts a new session. Each state is the
-- list sid, start, last, version, pageviews, events, entry, exit,
-- last_pageview, attribution (all strings).
--
-- It also marks the visitor active for the realtime view: the site's seen
-- sorted set (visitor -> unix time) and current hash (visitor -> page "\n"
-- source), trimming entries older than the realtime window.
--
-- KEYS[1] the session key, KEYS[2] the realtime seen set, KEYS[3] the
--         realtime current hash
-- ARGV: now, idle seconds, max age seconds, is_pageview (0/1), path,
--       new session id, attribution JSON, key TTL seconds, source name of a
--       new session, visitor id, realtime window seconds
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
if not prev then kv[#kv + 1] = 'src'; kv[#kv + 1] = ARGV[9] end
redis.call('HSET', key, unpack(kv))
redis.call('EXPIRE', key, tonumber(ARGV[8]))

local window = tonumber(ARGV[11])
local page = next[8]
if page == '' then page = path end
local src = redis.call('HGET', key, 'src') or ''
redis.call('ZADD', KEYS[2], now, ARGV[10])
redis.call('HSET', KEYS[3], ARGV[10], page .. '\n' .. src)
local stale = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', '(' .. (now - window), 'LIMIT', 0, 100)
if #stale > 0 then
  redis.call('ZREM', KEYS[2], unpack(stale))
  redis.call('HDEL', KEYS[3], unpack(stale))
end
redis.call('EXPIRE', KEYS[2], window * 2)
redis.call('EXPIRE', KEYS[3], window * 2)
return {prev, next}
