-- A bound on the failed attempts of one key: a log of their times.
-- KEYS[1]: a sorted set of the key's attempts, each scored by its time (ms);
-- an attempt is a failure until the caller removes it (it succeeded).
-- ARGV: now (ms), window (ms), bound N, this attempt's id.
-- Returns 0 when the attempt is counted, else the ms until one of the
-- attempts in the window leaves it (the attempt is not counted).
local now = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local n = tonumber(ARGV[3])
-- a call sent again after its answer was lost is counted once
if redis.call('ZSCORE', KEYS[1], ARGV[4]) then
  return 0
end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local count = redis.call('ZCARD', KEYS[1])
if count >= n then
  local first = redis.call('ZRANGE', KEYS[1], count - n, count - n, 'WITHSCORES')
  return math.max(tonumber(first[2]) + window - now, 1)
end
redis.call('ZADD', KEYS[1], now, ARGV[4])
redis.call('PEXPIRE', KEYS[1], window)
return 0
