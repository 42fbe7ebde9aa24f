-- Give up a node id (see runtime/engines/nodes.ts): its lease ends now, so the id is free at once.
-- KEYS[1]  node ids: hash id -> owner token        KEYS[2] leases: sorted set owner -> lease expiry ms
-- ARGV[1]  owner    ARGV[2] id
-- returns  1 when `owner` held it, else 0
if redis.call('HGET', KEYS[1], ARGV[2]) ~= ARGV[1] then return 0 end
redis.call('HDEL', KEYS[1], ARGV[2])
redis.call('ZADD', KEYS[2], 0, ARGV[1])
return 1
