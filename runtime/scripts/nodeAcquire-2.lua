-- Lease a free node id (see runtime/engines/nodes.ts).
-- KEYS[1]  node ids: hash id -> owner token        KEYS[2] leases: sorted set owner -> lease expiry ms
-- ARGV[1]  owner    ARGV[2] now ms    ARGV[3] ttl ms    ARGV[4] the id to try first (then the ones after it, mod 1024)
-- returns  the id leased, or -1 when every id is held by a live owner
local owner, now, ttl, start = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
for i = 0, 1023 do
  local id = (start + i) % 1024
  local holder = redis.call('HGET', KEYS[1], id)
  local alive = holder and tonumber(redis.call('ZSCORE', KEYS[2], holder) or '0') > now
  if not alive or holder == owner then
    redis.call('HSET', KEYS[1], id, owner)
    redis.call('ZADD', KEYS[2], now + ttl, owner)
    return id
  end
end
return -1
