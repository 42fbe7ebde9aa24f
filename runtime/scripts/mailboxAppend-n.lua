-- Append messages to principals' mailboxes in one call and wake whoever waits on them, on any node.
-- KEYS     per item two keys: the principal's mailbox stream and its index hash
--          stream: one entry per unacknowledged message {m = raw message id, p = payload JSON}
--          index:  '~' seed state ('1' complete, 'p' partial, absent: not seeded), <raw id> -> stream entry id,
--                  '#'<raw id> -> delivery count
-- ARGV[1]  capacity (most entries a mailbox holds)    ARGV[2] ttl ms (set here only on a mailbox not seeded yet)
-- ARGV[3]  wake channel ('' for none)                  ARGV[4] wake payload (runtime/engines/wake.ts)
-- ARGV[5]  k: how many distinct payloads follow, ARGV[6 .. 5+k] the payloads (a group send has one for all)
-- then     per item: its raw message id, the number (1..k) of its payload, and a cursor to hand the entry out
--          after ('' for none): when the mailbox is built and complete and holds nothing after that cursor, the new
--          entry is counted as delivered once, for a reader who has everything up to the cursor
-- returns  per item: the entry id when it was handed out, else 0. A message is left to Postgres (not stored) in a
--          partial or full mailbox, or when already there. A partial or full mailbox keeps new messages out: they
--          wait in Postgres and a later seed loads them. A mailbox not seeded yet still takes them: the seed merges.
local capacity, ttl = tonumber(ARGV[1]), ARGV[2]
local k = tonumber(ARGV[5])
local out = {}
for i = 1, #KEYS, 2 do
  local stream, index = KEYS[i], KEYS[i + 1]
  local a = 5 + k + (i - 1) / 2 * 3
  local id, payload, after = ARGV[a + 1], ARGV[5 + tonumber(ARGV[a + 2])], ARGV[a + 3]
  local handed = 0
  local got = redis.call('HMGET', index, '~', id)
  local state = got[1]
  local len = redis.call('XLEN', stream)
  if state and len == 0 and redis.call('EXISTS', stream) == 0 then
    -- an index whose stream was evicted apart: no longer a built mailbox (the next fetch rebuilds it, merging
    -- what is appended now), and the keys made here get an expiry below
    redis.call('HDEL', index, '~')
    state = nil
  end
  if state ~= 'p' and not got[2] then
    if len >= capacity then
      if state then redis.call('HSET', index, '~', 'p') end
    else
      local caughtUp = after ~= '' and state == '1' and #redis.call('XRANGE', stream, '(' .. after, '+', 'COUNT', 1) == 0
      local sid = redis.call('XADD', stream, '*', 'm', id, 'p', payload)
      if caughtUp then
        redis.call('HSET', index, id, sid, '#' .. id, 1)
        handed = sid
      else
        redis.call('HSET', index, id, sid)
      end
    end
  end
  -- A built mailbox keeps the expiry its seed gave both keys (a cache: it is rebuilt from Postgres once it
  -- expires); one not built yet lives as long as appends keep coming.
  if not state then
    redis.call('PEXPIRE', stream, ttl)
    redis.call('PEXPIRE', index, ttl)
  end
  out[#out + 1] = handed
end
if ARGV[3] ~= '' then redis.call('PUBLISH', ARGV[3], ARGV[4]) end
return out
