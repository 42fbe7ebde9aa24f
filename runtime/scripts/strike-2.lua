-- Record a refused request from one IP and ban it when refusals keep coming.
-- KEYS[1]  strikes hash {n = count, start = window start ms}
-- KEYS[2]  ban key: the time (ms) the ban ends
-- ARGV[1]  now ms   ARGV[2] window ms   ARGV[3] strikes that trigger a ban   ARGV[4] ban ms
-- returns  the time (ms) the IP is banned until, or 0
local now = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local threshold = tonumber(ARGV[3])
local banMs = tonumber(ARGV[4])

local until_ = tonumber(redis.call('GET', KEYS[2]))
if until_ ~= nil and until_ > now then return until_ end

local state = redis.call('HMGET', KEYS[1], 'n', 'start')
local n = tonumber(state[1])
local start = tonumber(state[2])
if n == nil or now - start >= window then
  n = 0
  start = now
end
n = n + 1
if n >= threshold then
  redis.call('DEL', KEYS[1])
  redis.call('SET', KEYS[2], tostring(now + banMs), 'PX', banMs)
  return now + banMs
end
redis.call('HSET', KEYS[1], 'n', n, 'start', start)
redis.call('PEXPIRE', KEYS[1], window)
return 0
