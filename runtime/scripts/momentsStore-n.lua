-- Cache moment records read from Postgres, or apply committed counts. Counts are written only when their
-- revision is newer than the one held; a tombstone (x) is never removed.
-- KEYS     the records
-- ARGV[1]  ttl ms (every record touched lives this long from now)
-- ARGV[2]  fields per record: 4 (likes, comments, rev, head) or 3 (likes, comments, rev: counts only)
-- ARGV[3..] the fields of each record in turn
local width = tonumber(ARGV[2])
for i, key in ipairs(KEYS) do
  local b = 2 + (i - 1) * width
  local held = redis.call('HGET', key, 'r')
  if not held or tonumber(ARGV[b + 3]) > tonumber(held) then
    redis.call('HSET', key, 'l', ARGV[b + 1], 'k', ARGV[b + 2], 'r', ARGV[b + 3])
  end
  if width == 4 then redis.call('HSET', key, 'j', ARGV[b + 4]) end
  redis.call('PEXPIRE', key, ARGV[1])
end
return #KEYS
