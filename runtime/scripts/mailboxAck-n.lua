-- Remove acknowledged messages from mailboxes for good (a stream holds only unacknowledged entries), and remember
-- each ack for a while (a tombstone): a rebuild from Postgres rows read before the ack (mailboxSeed-3.lua) or an
-- append that comes late (mailboxAppend-n.lua) then leaves the message out instead of delivering it again.
-- KEYS     per ack three keys: the mailbox stream, its index hash (layout in mailboxAppend-n.lua) and its tombstones
--          (sorted set: raw message id -> ack time ms)
-- ARGV[1]  now ms     ARGV[2] how long tombstones are kept, ms (older ones are trimmed here; the set expires then)
-- then     per ack its raw message id
-- returns  per ack: 1 when it was in the mailbox, else 0 (the tombstone is recorded either way)
local now, keep = tonumber(ARGV[1]), tonumber(ARGV[2])
local out = {}
for i = 1, #KEYS, 3 do
  local stream, index, acked, id = KEYS[i], KEYS[i + 1], KEYS[i + 2], ARGV[2 + (i + 2) / 3]
  local sid = redis.call('HGET', index, id)
  if sid then
    redis.call('XDEL', stream, sid)
    redis.call('HDEL', index, id, '#' .. id)
    out[#out + 1] = 1
  else
    out[#out + 1] = 0
  end
  redis.call('ZADD', acked, now, id)
  -- trimmed once per run of acks of one principal (a cumulative ack sends its messages together)
  if KEYS[i + 5] ~= acked then
    redis.call('ZREMRANGEBYSCORE', acked, '-inf', now - keep)
    redis.call('PEXPIRE', acked, keep)
  end
end
return out
