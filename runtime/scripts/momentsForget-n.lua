-- Tombstone moment records (a later store keeps the tombstone); their served JSON becomes ''.
-- KEYS     per moment two keys: its record hash, then its served JSON
-- ARGV[1]  ttl ms
for i = 1, #KEYS, 2 do
  redis.call('HSET', KEYS[i], 'x', '1')
  redis.call('PEXPIRE', KEYS[i], ARGV[1])
  redis.call('SET', KEYS[i + 1], '', 'PX', ARGV[1])
end
return #KEYS / 2
