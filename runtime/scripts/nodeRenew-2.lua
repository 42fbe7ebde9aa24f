-- Renew a node id's lease, or take it back when nobody live holds it (see runtime/engines/nodes.ts).
-- KEYS[1]  node ids: hash id -> owner token        KEYS[2] leases: sorted set owner -> lease expiry ms
-- ARGV[1]  owner    ARGV[2] id    ARGV[3] now ms    ARGV[4] ttl ms
-- returns  1 when `owner` holds the id until now + ttl; 0 when another live owner holds it
-- Owners whose lease ended over a minute ago are dropped from KEYS[2] (a process's token is never used again; 0.1.0
-- nodes claim a dead owner's in-flight record within a second of its lease's end).
local owner, id, now, ttl = ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
local holder = redis.call('HGET', KEYS[1], id)
if holder and holder ~= owner and tonumber(redis.call('ZSCORE', KEYS[2], holder) or '0') > now then return 0 end
redis.call('HSET', KEYS[1], id, owner)
redis.call('ZADD', KEYS[2], now + ttl, owner)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - 60000)
return 1
