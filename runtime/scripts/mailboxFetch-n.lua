-- Hand out entries of several mailboxes after a cursor each, oldest first, counting one more delivery for each.
-- KEYS     per request two keys: the mailbox stream and its index hash (layout in mailboxAppend-n.lua)
-- ARGV[1]  refill mark: a partial mailbox holding fewer entries must be seeded again
--          (a fetch leaves the expiry alone: see mailboxAppend-n.lua; an expired mailbox is seeded again)
-- then     per request: its cursor (a stream entry id to read after, '' for the oldest unacknowledged entry)
--          and the most entries it wants
-- returns  per request: -1 when its mailbox must be seeded from Postgres first; else a flat array: stream id,
--          raw message id, payload, delivery count, ... (oldest first)
local refill = tonumber(ARGV[1])
local out = {}
for i = 1, #KEYS, 2 do
  local stream, index = KEYS[i], KEYS[i + 1]
  local a = 1 + (i - 1)
  local cursor, limit = ARGV[a + 1], tonumber(ARGV[a + 2])
  local state = redis.call('HGET', index, '~')
  local rows
  if state and (state ~= 'p' or redis.call('XLEN', stream) >= refill) then
    local start = '-'
    if cursor ~= '' then start = '(' .. cursor end
    rows = redis.call('XRANGE', stream, start, '+', 'COUNT', limit)
    -- an index without its stream (evicted apart) is no mailbox; asked only when nothing was found
    if #rows == 0 and redis.call('EXISTS', stream) == 0 then rows = nil end
  end
  if not rows then
    out[#out + 1] = -1
  else
    local got = {}
    for _, e in ipairs(rows) do
      local f = e[2]
      local mid, payload
      for j = 1, #f, 2 do
        if f[j] == 'm' then mid = f[j + 1] elseif f[j] == 'p' then payload = f[j + 1] end
      end
      got[#got + 1] = e[1]
      got[#got + 1] = mid
      got[#got + 1] = payload
      got[#got + 1] = redis.call('HINCRBY', index, '#' .. mid, 1)
    end
    out[#out + 1] = got
  end
end
return out
