-- Marks visitors active in KEYS[1], the hash of a site's visitors seen in one
-- minute: ARGV[1] is how long the hash lives (seconds), then per visitor its
-- id and its value: the second of the minute it was last seen (two digits),
-- a space, and its page "\n" source.
--
-- A visitor seen later in the minute elsewhere keeps its later value: two
-- instances may flush one visitor's events of a minute in either order.
-- A couple of commands per call, however many visitors.
local ids = {}
for i = 2, #ARGV, 2 do ids[#ids + 1] = ARGV[i] end
local was = redis.call('HMGET', KEYS[1], unpack(ids))
local sets = {}
for j = 1, #ids do
  local value = ARGV[2 * j + 1]
  if not was[j] or string.sub(was[j], 1, 2) <= string.sub(value, 1, 2) then
    sets[#sets + 1] = ids[j]
    sets[#sets + 1] = value
  end
end
if #sets > 0 then redis.call('HSET', KEYS[1], unpack(sets)) end
redis.call('EXPIRE', KEYS[1], ARGV[1])
return #sets / 2
