-- Read one feed timeline, or record a rebuild lease when it is not cached.
-- A timeline is a sorted set with every score 0. Members: moment ids as 19-digit zero-padded decimals
-- (lexical order is numeric order); '~<floor>' once filled (complete for ids >= floor); 'l:<lease>' for
-- each rebuild in progress. Digits sort below ':' and letters, so '(:' bounds the ids from above.
-- KEYS[1]  the timeline
-- ARGV[1]  exclusive upper bound in BYLEX form: '(<19 digits>', or '(:' for the newest
-- ARGV[2]  count
-- ARGV[3]  lease token recorded on a miss      ARGV[4] ttl ms of a timeline created by a miss
-- returns  filled: {floor, id...} (ids newest first); not filled: {} after recording the lease
local marker = redis.call('ZRANGE', KEYS[1], '[~', '+', 'BYLEX', 'LIMIT', 0, 1)
if #marker == 0 then
  local existed = redis.call('EXISTS', KEYS[1])
  redis.call('ZADD', KEYS[1], 0, 'l:' .. ARGV[3])
  if existed == 0 then redis.call('PEXPIRE', KEYS[1], ARGV[4]) end
  return {}
end
local out = redis.call('ZRANGE', KEYS[1], ARGV[1], '-', 'BYLEX', 'REV', 'LIMIT', 0, tonumber(ARGV[2]))
table.insert(out, 1, string.sub(marker[1], 2))
return out
