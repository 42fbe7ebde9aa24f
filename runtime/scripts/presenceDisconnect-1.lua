-- Drop one connection of a principal.
-- KEYS[1]  presence sorted set: connection id -> expiry ms
-- ARGV[1]  now ms   ARGV[2] connection id
-- returns  1 when this removed the principal's last live connection (it just went offline), else 0
local removed = redis.call('ZREM', KEYS[1], ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if redis.call('ZCARD', KEYS[1]) == 0 then
  redis.call('DEL', KEYS[1])
  return removed
end
return 0
