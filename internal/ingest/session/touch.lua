-- Applies one event to a visitor's session and returns {previous, now}:
-- previous is false when the event starts a new session, else the list sid,
-- start, last, version, pageviews, events, entry, exit, last_pageview,
-- attribution, source (all strings) as they were; now is the event's time
-- (never before the session's last event). The caller derives the new state
-- from these with the same rule (session.go, next).
--
-- It also marks the visitor active for the realtime view: the site's seen
-- sorted set (visitor -> unix time) and current hash (visitor -> page "\n"
-- source). Entries older than the realtime window are trimmed, and the keys'
-- expiry renewed, when a visitor joins the set (readers filter by time, so
-- trimming is housekeeping).
--
-- Every state is a hash; a continuing session rewrites only the fields the
-- event changes.
--
-- KEYS[1] the session key, KEYS[2] the realtime seen set, KEYS[3] the
--         realtime current hash
-- ARGV: now, idle seconds, max age seconds, is_pageview (0/1), path,
--       new session id, attribution, key TTL seconds, source name of a
--       new session, visitor id, realtime window seconds
local key = KEYS[1]
local now = tonumber(ARGV[1])
local idle = tonumber(ARGV[2])
local max_age = tonumber(ARGV[3])
local is_pageview = ARGV[4] == '1'
local path = ARGV[5]

local prev = redis.call('HMGET', key, 'sid', 'start', 'last', 'ver', 'pv', 'ev', 'entry', 'exit', 'lpv', 'attrs', 'src')
local alive = false
if prev[1] then
  local start = tonumber(prev[2])
  local last = tonumber(prev[3])
  -- instances' clocks differ slightly: a session never goes back in time
  if now < last then now = last end
  alive = (now - last) <= idle and (now - start) < max_age
end

local page, src
if alive then
  if is_pageview then
    local entry = prev[7]
    if entry == '' then entry = path end
    redis.call('HSET', key, 'last', now, 'ver', tonumber(prev[4]) + 1, 'pv', tonumber(prev[5]) + 1,
      'entry', entry, 'exit', path, 'lpv', now)
    page = path
  else
    redis.call('HSET', key, 'last', now, 'ver', tonumber(prev[4]) + 1, 'ev', tonumber(prev[6]) + 1)
    page = prev[8]
    if page == '' then page = path end
  end
  src = prev[11] or ''
else
  prev = false
  src = ARGV[9]
  page = path
  if is_pageview then
    redis.call('HSET', key, 'sid', ARGV[6], 'start', now, 'last', now, 'ver', 1, 'pv', 1, 'ev', 0,
      'entry', path, 'exit', path, 'lpv', now, 'attrs', ARGV[7], 'src', src)
  else
    redis.call('HSET', key, 'sid', ARGV[6], 'start', now, 'last', now, 'ver', 1, 'pv', 0, 'ev', 1,
      'entry', '', 'exit', '', 'lpv', 0, 'attrs', ARGV[7], 'src', src)
  end
end
redis.call('EXPIRE', key, tonumber(ARGV[8]))

local window = tonumber(ARGV[11])
if redis.call('ZADD', KEYS[2], now, ARGV[10]) == 1 then
  local stale = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', '(' .. (now - window), 'LIMIT', 0, 100)
  if #stale > 0 then
    redis.call('ZREM', KEYS[2], unpack(stale))
    redis.call('HDEL', KEYS[3], unpack(stale))
  end
  redis.call('EXPIRE', KEYS[2], window * 3)
  redis.call('EXPIRE', KEYS[3], window * 3)
end
redis.call('HSET', KEYS[3], ARGV[10], page .. '\n' .. src)
return {prev, now}
