-- Cache moment records read from Postgres, or apply committed counts. Counts are written only when their
-- revision is newer than the one held; a tombstone (x) is never removed. After each record changes, its served
-- JSON (the second key) is written from it: the head closed with the counts, '' once tombstoned.
-- KEYS     per moment two keys: its record hash, then its served JSON (layout in runtime/engines/redis/keys.ts)
-- ARGV[1]  ttl ms (every record touched lives this long from now, its JSON too)
-- ARGV[2]  fields per record: 4 (likes, comments, rev, head) or 3 (likes, comments, rev: counts only)
-- ARGV[3..] the fields of each record in turn
local width = tonumber(ARGV[2])
for i = 1, #KEYS, 2 do
  local key, json = KEYS[i], KEYS[i + 1]
  local b = 2 + (i - 1) / 2 * width
  local held = redis.call('HGET', key, 'r')
  if not held or tonumber(ARGV[b + 3]) > tonumber(held) then
    redis.call('HSET', key, 'l', ARGV[b + 1], 'k', ARGV[b + 2], 'r', ARGV[b + 3])
  end
  if width == 4 then redis.call('HSET', key, 'j', ARGV[b + 4]) end
  redis.call('PEXPIRE', key, ARGV[1])
  local r = redis.call('HMGET', key, 'j', 'l', 'k', 'x')
  if r[4] then
    redis.call('SET', json, '', 'PX', ARGV[1])
  elseif r[1] and r[2] then
    redis.call('SET', json, r[1] .. ',"like_count":' .. r[2] .. ',"comment_count":' .. r[3] .. '}', 'PX', ARGV[1])
  else
    -- counts without a head (the hash was evicted and rebuilt by a counts-only write): serve nothing rather
    -- than JSON with older counts
    redis.call('DEL', json)
  end
end
return #KEYS / 2
