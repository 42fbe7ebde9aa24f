-- Append messages to principals' mailboxes in one call and wake whoever waits on them, on any node.
-- KEYS     per item five keys: the principal's mailbox stream, its index hash and its three ack tombstone sets
--          stream: one entry per unacknowledged message {m = raw message id, p = payload JSON}
--          index:  '~' seed state ('1' complete, 'p' partial, absent: not seeded), <raw id> -> stream entry id,
--                  '#'<raw id> -> delivery count, 'h' -> the entry id of the last entry handed out by an append,
--                  'l' -> the entry id of the last entry added (by an append or a seed)
--          tombstones: raw ids acknowledged lately (mailboxAck-n.lua), in any of the three sets: never stored again
-- ARGV[1]  capacity (most entries a mailbox holds)    ARGV[2] ttl ms (set here only on a mailbox not seeded yet)
-- ARGV[3]  wake channel ('' for none)                  ARGV[4] wake payload (runtime/engines/wake.ts)
-- ARGV[5]  '1' to ensure: store only into built mailboxes (one not built is rebuilt from Postgres when needed);
--          used to finish the appends of a node that died (runtime/messaging/reconcile.ts); '' for a send
-- ARGV[6]  k: how many distinct payloads follow, ARGV[7 .. 6+k] the payloads (a group send has one for all)
-- then     per item: its raw message id, the number (1..k) of its payload, and a cursor to hand the entry out
--          after ('' for none): when the mailbox is built and complete and holds nothing after that cursor, the new
--          entry is counted as delivered once, for a reader who has everything up to the cursor. 'm'<raw id> instead
--          chains on an earlier append: the cursor is that message's entry, provided it is the last one handed out.
--          "Nothing after the cursor" is read off the index when the cursor is the last entry added ('l', read in the
--          same HMGET), and only otherwise from the stream (a later entry may have been added and acknowledged since)
-- returns  per item: the entry id when it was handed out, else 0. A message is left to Postgres (not stored) in a
--          partial or full mailbox, or when already there or acknowledged. A partial or full mailbox keeps new
--          messages out: they wait in Postgres and a later seed loads them. A mailbox not seeded yet still takes
--          them (the seed merges), unless ensuring.
local capacity, ttl = tonumber(ARGV[1]), ARGV[2]
local ensure = ARGV[5] == '1'
local k = tonumber(ARGV[6])
local out = {}
for i = 1, #KEYS, 5 do
  local stream, index = KEYS[i], KEYS[i + 1]
  local a = 6 + k + (i - 1) / 5 * 3
  local id, payload, after = ARGV[a + 1], ARGV[6 + tonumber(ARGV[a + 2])], ARGV[a + 3]
  local handed = 0
  -- a chained hand-out ('m'<raw id>) also reads that message's entry id and the last one handed out ('h')
  local chained = string.sub(after, 1, 1) == 'm'
  local got = chained and redis.call('HMGET', index, '~', id, 'l', string.sub(after, 2), 'h') or redis.call('HMGET', index, '~', id, 'l')
  local state = got[1]
  local len = redis.call('XLEN', stream)
  if state and len == 0 and redis.call('EXISTS', stream) == 0 then
    -- an index whose stream was evicted apart: no longer a built mailbox (the next fetch rebuilds it, merging
    -- what is appended now), and the keys made here get an expiry below
    redis.call('HDEL', index, '~')
    state = nil
  end
  if state ~= 'p' and not got[2] and not (ensure and not state)
    and redis.call('SISMEMBER', KEYS[i + 2], id) == 0 and redis.call('SISMEMBER', KEYS[i + 3], id) == 0
    and redis.call('SISMEMBER', KEYS[i + 4], id) == 0 then
    if len >= capacity then
      if state then redis.call('HSET', index, '~', 'p') end
    else
      if chained then after = (got[4] and got[4] == got[5]) and got[4] or '' end
      local caughtUp = after ~= '' and state == '1'
        and (got[3] == after or #redis.call('XRANGE', stream, '(' .. after, '+', 'COUNT', 1) == 0)
      local sid = redis.call('XADD', stream, '*', 'm', id, 'p', payload)
      if caughtUp then
        redis.call('HSET', index, id, sid, 'l', sid, '#' .. id, 1, 'h', sid)
        handed = sid
      else
        redis.call('HSET', index, id, sid, 'l', sid)
      end
    end
  end
  -- A built mailbox keeps the expiry its seed gave both keys (a cache: it is rebuilt from Postgres once it
  -- expires); one not built yet lives as long as appends keep coming.
  if not state and not ensure then
    redis.call('PEXPIRE', stream, ttl)
    redis.call('PEXPIRE', index, ttl)
  end
  out[#out + 1] = handed
end
if ARGV[3] ~= '' then redis.call('PUBLISH', ARGV[3], ARGV[4]) end
return out
