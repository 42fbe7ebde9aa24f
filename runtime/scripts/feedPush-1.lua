-- Add a moment to a feed timeline that exists (filled or being rebuilt), trimming it to its depth.
-- Member layout: see feedRead-1.lua.
-- KEYS[1]  the timeline
-- ARGV[1]  moment id (19 digits)      ARGV[2] depth
-- returns  1 when added, 0 when the timeline does not exist (its next read rebuilds it from Postgres)
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('ZADD', KEYS[1], 0, ARGV[1])
local depth = tonumber(ARGV[2])
local n = redis.call('ZLEXCOUNT', KEYS[1], '-', '(:')
if n > depth then
  redis.call('ZREMRANGEBYRANK', KEYS[1], 0, n - depth - 1)
  local marker = redis.call('ZRANGE', KEYS[1], '[~', '+', 'BYLEX', 'LIMIT', 0, 1)
  local lowest = redis.call('ZRANGE', KEYS[1], 0, 0)[1]
  if #marker > 0 and lowest > string.sub(marker[1], 2) then
    redis.call('ZREM', KEYS[1], marker[1])
    redis.call('ZADD', KEYS[1], 0, '~' .. lowest)
  end
end
return 1
