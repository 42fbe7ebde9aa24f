-- Install a timeline rebuilt from Postgres, if the lease handed out by feedRead is still valid (an
-- invalidation deletes the key, revoking every lease). Ids pushed since the lease was recorded are kept.
-- Member layout: see feedRead-1.lua.
-- KEYS[1]  the timeline
-- ARGV[1]  lease token      ARGV[2] depth      ARGV[3] floor (19 digits; all zeros when complete)
-- ARGV[4]  ttl ms           ARGV[5..] moment ids (19 digits)
-- returns  1 when installed, 0 when the lease was revoked
if not redis.call('ZSCORE', KEYS[1], 'l:' .. ARGV[1]) then return 0 end
redis.call('ZREMRANGEBYLEX', KEYS[1], '[l:', '(l;')
redis.call('ZREMRANGEBYLEX', KEYS[1], '[~', '+')
local args = {}
for i = 5, #ARGV do
  args[#args + 1] = 0
  args[#args + 1] = ARGV[i]
  if #args >= 400 then
    redis.call('ZADD', KEYS[1], unpack(args))
    args = {}
  end
end
if #args > 0 then redis.call('ZADD', KEYS[1], unpack(args)) end
local depth = tonumber(ARGV[2])
local floor = ARGV[3]
local n = redis.call('ZLEXCOUNT', KEYS[1], '-', '(:')
if n > depth then
  redis.call('ZREMRANGEBYRANK', KEYS[1], 0, n - depth - 1)
  local lowest = redis.call('ZRANGE', KEYS[1], 0, 0)[1]
  if lowest > floor then floor = lowest end
end
redis.call('ZADD', KEYS[1], 0, '~' .. floor)
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return 1
