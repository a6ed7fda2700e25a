-- Marks visitors active: ARGV[1] is the realtime window in seconds, ARGV[2]
-- the time the trimming counts back from (unix seconds), then per visitor
-- its id, when it was last seen (unix seconds) and its page "\n" source.
-- KEYS[1] the site's seen sorted set (visitor -> last seen), KEYS[2] its
-- current hash (visitor -> page and source).
--
-- A visitor seen later elsewhere keeps its later time and page. Entries
-- older than the window are trimmed (readers filter by time, so trimming is
-- housekeeping), and both keys expire when the site goes quiet. A few
-- commands per call, however many visitors.
local window = tonumber(ARGV[1])
local ids = {}
for i = 3, #ARGV, 3 do ids[#ids + 1] = ARGV[i] end
local was = redis.call('ZMSCORE', KEYS[1], unpack(ids))
local scores, pages = {}, {}
for j = 1, #ids do
  local seen = tonumber(ARGV[3 * j + 1])
  if not was[j] or tonumber(was[j]) <= seen then
    scores[#scores + 1] = seen
    scores[#scores + 1] = ids[j]
    pages[#pages + 1] = ids[j]
    pages[#pages + 1] = ARGV[3 * j + 2]
  end
end
if #scores > 0 then
  redis.call('ZADD', KEYS[1], unpack(scores))
  redis.call('HSET', KEYS[2], unpack(pages))
end
local stale = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', '(' .. (tonumber(ARGV[2]) - window), 'LIMIT', 0, 1000)
if #stale > 0 then
  redis.call('ZREM', KEYS[1], unpack(stale))
  redis.call('HDEL', KEYS[2], unpack(stale))
end
redis.call('EXPIRE', KEYS[1], window * 3)
redis.call('EXPIRE', KEYS[2], window * 3)
return #stale
