-- Say which release a node runs (see runtime/engines/nodes.ts), and forget what owners whose lease has ended had
-- announced, in one step: an owner whose lease is live when this runs keeps its entry, whenever it announced.
-- KEYS[1]  releases: hash owner -> release JSON     KEYS[2] leases: sorted set owner -> lease expiry ms
-- ARGV[1]  owner    ARGV[2] release JSON    ARGV[3] now ms
-- returns  how many entries were forgotten
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
local now = tonumber(ARGV[3])
local gone = 0
for _, owner in ipairs(redis.call('HKEYS', KEYS[1])) do
  if owner ~= ARGV[1] then
    local until_ms = redis.call('ZSCORE', KEYS[2], owner)
    if not until_ms or tonumber(until_ms) <= now then
      redis.call('HDEL', KEYS[1], owner)
      gone = gone + 1
    end
  end
end
return gone
