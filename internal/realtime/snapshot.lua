-- Returns the current-page/source values of the visitors seen since ARGV[1]
-- (unix seconds). KEYS[1] the site's seen sorted set, KEYS[2] its current hash.
local members = redis.call('ZRANGEBYSCORE', KEYS[1], ARGV[1], '+inf')
local out = {}
for i = 1, #members, 1000 do
  local chunk = {}
  for j = i, math.min(i + 999, #members) do chunk[#chunk + 1] = members[j] end
  local vals = redis.call('HMGET', KEYS[2], unpack(chunk))
  for _, v in ipairs(vals) do
    if v then out[#out + 1] = v else out[#out + 1] = '' end
  end
end
return out
