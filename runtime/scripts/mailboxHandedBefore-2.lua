-- The entries a cumulative ack takes along: those of the same thread as a given message that come before it in the
-- mailbox (delivery order) and have been handed out at least once. A message appended late (its send committed
-- after a newer one of the thread) and not handed out yet is left alone: an ack never takes a message unseen.
-- KEYS[1]  the mailbox stream     KEYS[2] its index hash (layout in mailboxAppend-n.lua)
-- ARGV[1]  the acknowledged message's raw id
-- returns  raw message ids, oldest first; empty when the message is not in the mailbox (not built, or gone)
local stream, index = KEYS[1], KEYS[2]
local sid = redis.call('HGET', index, ARGV[1])
if not sid then return {} end
local function field(f, name)
  for j = 1, #f, 2 do if f[j] == name then return f[j + 1] end end
  return nil
end
-- a message's thread, read from its payload: the first "thread_id" key (the payload's own, before any text)
local function threadOf(f)
  local p = field(f, 'p')
  return p and string.match(p, '"thread_id":"([^"]*)"')
end
local own = redis.call('XRANGE', stream, sid, sid)
if #own == 0 then return {} end
local thread = threadOf(own[1][2])
if not thread then return {} end
local out = {}
for _, e in ipairs(redis.call('XRANGE', stream, '-', '(' .. sid)) do
  local mid = field(e[2], 'm')
  if threadOf(e[2]) == thread and tonumber(redis.call('HGET', index, '#' .. mid) or '0') >= 1 then out[#out + 1] = mid end
end
return out
