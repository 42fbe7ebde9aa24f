-- Hand out mailbox entries after a cursor, oldest first, counting one more delivery for each.
-- KEYS[1]  mailbox stream      KEYS[2] mailbox index hash (see mailboxAppend-n.lua)
-- ARGV[1]  cursor: a stream entry id to read after, or '' for the oldest unacknowledged entry
-- ARGV[2]  most entries        ARGV[3] idle ttl ms
-- ARGV[4]  refill mark: a partial mailbox holding fewer entries than this must be seeded again
-- returns  -1 when the mailbox must be seeded from Postgres first;
--          else a flat array: stream id, raw message id, payload, delivery count, ... (oldest first)
local state = redis.call('HGET', KEYS[2], '~')
if not state or redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
if state == 'p' and redis.call('XLEN', KEYS[1]) < tonumber(ARGV[4]) then return -1 end
local start = '-'
if ARGV[1] ~= '' then start = '(' .. ARGV[1] end
local rows = redis.call('XRANGE', KEYS[1], start, '+', 'COUNT', tonumber(ARGV[2]))
local out = {}
for _, e in ipairs(rows) do
  local f = e[2]
  local mid, payload
  for i = 1, #f, 2 do
    if f[i] == 'm' then mid = f[i + 1] elseif f[i] == 'p' then payload = f[i + 1] end
  end
  local n = redis.call('HINCRBY', KEYS[2], '#' .. mid, 1)
  out[#out + 1] = e[1]
  out[#out + 1] = mid
  out[#out + 1] = payload
  out[#out + 1] = n
end
redis.call('PEXPIRE', KEYS[1], ARGV[3])
redis.call('PEXPIRE', KEYS[2], ARGV[3])
return out
