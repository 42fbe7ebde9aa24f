-- Remove acknowledged messages from mailboxes for good (a stream holds only unacknowledged entries).
-- KEYS     per ack two keys: the mailbox stream and its index hash (layout in mailboxAppend-n.lua)
-- ARGV     per ack its raw message id
-- returns  per ack: 1 when it was there, else 0
local out = {}
for i = 1, #KEYS, 2 do
  local stream, index, id = KEYS[i], KEYS[i + 1], ARGV[(i + 1) / 2]
  local sid = redis.call('HGET', index, id)
  if sid then
    redis.call('XDEL', stream, sid)
    redis.call('HDEL', index, id, '#' .. id)
    out[#out + 1] = 1
  else
    out[#out + 1] = 0
  end
end
return out
