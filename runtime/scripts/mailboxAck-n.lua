-- Remove acknowledged messages from mailboxes for good (a stream holds only unacknowledged entries), and remember
-- each ack for a while (a tombstone): a rebuild from Postgres rows read before the ack (mailboxSeed-5.lua) or an
-- append that comes late (mailboxAppend-n.lua) then leaves the message out instead of delivering it again.
-- Tombstones live in three sets per principal that take turns by time slot (one slot = the ack memory): an ack goes
-- into its slot's set, which expires at the end of the next slot, so a tombstone lasts more than one slot; the set's
-- turn comes again a slot after that, so it has expired by then and no trimming is needed (runtime/engines/redis/
-- mailbox.ts, ackSlot). Before, a sorted set by ack time was trimmed on every ack: its ZADD cost about five times
-- this SADD, and the trim came on top (bench/RESULTS.md, "Issue 20, a third session").
-- KEYS     per ack three keys: the mailbox stream, its index hash (layout in mailboxAppend-n.lua) and the tombstone
--          set of the current slot
-- ARGV[1]  ms until the end of the next slot (the tombstone set's expiry; the caller computes it from its clock)
-- then     per ack its raw message id
-- returns  per ack: 1 when it was in the mailbox, else 0 (the tombstone is recorded either way)
local expire = ARGV[1]
local out = {}
for i = 1, #KEYS, 3 do
  local stream, index, acked, id = KEYS[i], KEYS[i + 1], KEYS[i + 2], ARGV[1 + (i + 2) / 3]
  local sid = redis.call('HGET', index, id)
  if sid then
    redis.call('XDEL', stream, sid)
    redis.call('HDEL', index, id, '#' .. id)
    out[#out + 1] = 1
  else
    out[#out + 1] = 0
  end
  redis.call('SADD', acked, id)
  -- the expiry is set once per run of acks of one principal (a cumulative ack sends its messages together)
  if KEYS[i + 5] ~= acked then redis.call('PEXPIRE', acked, expire) end
end
return out
