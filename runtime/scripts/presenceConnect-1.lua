-- Record or refresh one live connection of a principal.
-- KEYS[1]  presence sorted set: connection id -> expiry ms
-- ARGV[1]  now ms   ARGV[2] expiry ms (now + ttl)   ARGV[3] connection id   ARGV[4] ttl ms (key expiry)
-- returns  1 when the principal just came online (no live connection before), else 0
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
local before = redis.call('ZCARD', KEYS[1])
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
if before == 0 then return 1 end
return 0
