-- Token bucket take.
-- KEYS[1]  bucket hash {t = tokens (float), ts = last update ms}
-- ARGV[1]  capacity (tokens)      ARGV[2] window ms (time to refill from empty to full)
-- ARGV[3]  now ms                 ARGV[4] cost (tokens)
-- returns  {allowed 0|1, remaining whole tokens, retry_after ms, reset ms}
local cap = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
local cost = tonumber(ARGV[4])
local rate = cap / window

local state = redis.call('HMGET', KEYS[1], 't', 'ts')
local tokens = tonumber(state[1])
local ts = tonumber(state[2])
if tokens == nil then
  tokens = cap
  ts = now
end
local elapsed = now - ts
if elapsed < 0 then elapsed = 0 end
tokens = math.min(cap, tokens + elapsed * rate)

local allowed = 0
local retry = 0
if tokens >= cost then
  tokens = tokens - cost
  allowed = 1
else
  retry = math.ceil((cost - tokens) / rate)
end

local reset = math.ceil((cap - tokens) / rate)
redis.call('HSET', KEYS[1], 't', tostring(tokens), 'ts', tostring(math.max(now, ts)))
redis.call('PEXPIRE', KEYS[1], reset + 1000)
return {allowed, math.floor(tokens), retry, reset}
