-- A GCRA limit whose tokens instances take in leases.
-- KEYS[1]: the key's theoretical arrival time (TAT), in microseconds.
-- KEYS[2]: this call's answer, kept for a while: the client may send the
-- call again when the answer was lost (go-redis retries a command whose
-- reply timed out), and it must not give back or take tokens twice.
-- ARGV: limit N, period (µs), tokens given back, tokens needed, extra tokens
-- wanted, reserve (no extra comes from the last `reserve` tokens), ms the
-- answer is kept.
-- Returns the tokens granted (0, or at least the tokens needed), the tokens
-- left after the grant, and the µs until the full limit is back.
local done = redis.call('GET', KEYS[2])
if done then
  local g, l, r = string.match(done, '^(%-?%d+) (%-?%d+) (%-?%d+)$')
  return {tonumber(g), tonumber(l), tonumber(r)}
end
local n = tonumber(ARGV[1])
local period = tonumber(ARGV[2])
local back = tonumber(ARGV[3])
local need = tonumber(ARGV[4])
local extra = tonumber(ARGV[5])
local reserve = tonumber(ARGV[6])
local interval = period / n

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
tat = math.max(tat - back * interval, now)

local avail = math.floor((now + period - tat) / interval)
local grant = 0
if avail >= need then
  grant = need + math.max(0, math.min(extra, avail - need - reserve))
end
tat = tat + grant * interval
if tat > now then
  redis.call('SET', KEYS[1], string.format('%.0f', tat), 'PX', math.ceil((tat - now) / 1000))
else
  redis.call('DEL', KEYS[1])
end
local answer = {grant, avail - grant, math.ceil(tat - now)}
redis.call('SET', KEYS[2], string.format('%.0f %.0f %.0f', answer[1], answer[2], answer[3]), 'PX', ARGV[7])
return answer
