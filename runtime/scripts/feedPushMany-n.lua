-- Add a moment to every feed timeline given that exists (filled or being rebuilt), trimming each to its depth: what
-- feedPush-1.lua does for one timeline, for all of a moment's timelines in one call (a post's fan-out).
-- Member layout: see feedRead-1.lua.
-- KEYS     the timelines
-- ARGV[1]  moment id (19 digits)      ARGV[2] depth
-- returns  how many timelines it was added to (one that does not exist is rebuilt from Postgres on its next read)
local depth = tonumber(ARGV[2])
local added = 0
for k = 1, #KEYS do
  local key = KEYS[k]
  if redis.call('EXISTS', key) == 1 then
    redis.call('ZADD', key, 0, ARGV[1])
    added = added + 1
    local n = redis.call('ZLEXCOUNT', key, '-', '(:')
    if n > depth then
      redis.call('ZREMRANGEBYRANK', key, 0, n - depth - 1)
      local marker = redis.call('ZRANGE', key, '[~', '+', 'BYLEX', 'LIMIT', 0, 1)
      local lowest = redis.call('ZRANGE', key, 0, 0)[1]
      if #marker > 0 and lowest > string.sub(marker[1], 2) then
        redis.call('ZREM', key, marker[1])
        redis.call('ZADD', key, 0, '~' .. lowest)
      end
    end
  end
end
return added
