-- Take over a dead node's messages in flight (see runtime/engines/nodes.ts InFlightRegistry.claim).
-- KEYS[1]  leases: sorted set owner -> lease expiry ms     KEYS[2] the dead owner's in-flight set
-- KEYS[3]  the claiming owner's in-flight set (sorted sets: raw message id -> when recorded ms)
-- ARGV[1]  the dead owner      ARGV[2] now ms
-- returns  how many messages moved; 0 and nothing done when the dead owner's lease runs past now (renewed)
local lease = redis.call('ZSCORE', KEYS[1], ARGV[1])
if lease and tonumber(lease) > tonumber(ARGV[2]) then return 0 end
local got = redis.call('ZRANGE', KEYS[2], 0, -1, 'WITHSCORES')
for i = 1, #got, 2 do
  redis.call('ZADD', KEYS[3], 'NX', got[i + 1], got[i])
end
redis.call('DEL', KEYS[2])
redis.call('ZREM', KEYS[1], ARGV[1])
return #got / 2
