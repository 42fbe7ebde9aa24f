-- Tombstone moment records (a later store keeps the tombstone).
-- KEYS     the records
-- ARGV[1]  ttl ms
for _, key in ipairs(KEYS) do
  redis.call('HSET', key, 'x', '1')
  redis.call('PEXPIRE', key, ARGV[1])
end
return #KEYS
