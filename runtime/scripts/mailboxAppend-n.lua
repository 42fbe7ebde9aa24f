-- Append messages to principals' mailboxes in one call and wake whoever waits on them, on any node.
-- KEYS     per item two keys: the principal's mailbox stream and its index hash
--          stream: one entry per unacknowledged message {m = raw message id, p = payload JSON}
--          index:  '~' seed state ('1' complete, 'p' partial, absent: not seeded), <raw id> -> stream entry id,
--                  '#'<raw id> -> delivery count
-- ARGV[1]  capacity (most entries a mailbox holds)    ARGV[2] ttl ms (set here only on a mailbox not seeded yet)
-- ARGV[3]  wake channel ('' for none)                  ARGV[4] wake payload (runtime/engines/wake.ts)
-- ARGV[5]  k: how many distinct payloads follow, ARGV[6 .. 5+k] the payloads (a group send has one for all)
-- then     per item: its raw message id and the number (1..k) of its payload
-- returns  how many were stored; a message is left to Postgres (not stored) in a partial or full mailbox, or
--          when already there. A partial or full mailbox keeps new messages out: they wait in Postgres and a
--          later seed loads them. A mailbox not seeded yet still takes them: the seed merges.
local capacity, ttl = tonumber(ARGV[1]), ARGV[2]
local k = tonumber(ARGV[5])
local stored = 0
for i = 1, #KEYS, 2 do
  local stream, index = KEYS[i], KEYS[i + 1]
  local a = 5 + k + (i - 1)
  local id, payload = ARGV[a + 1], ARGV[5 + tonumber(ARGV[a + 2])]
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
      local sid = redis.call('XADD', stream, '*', 'm', id, 'p', payload)
      redis.call('HSET', index, id, sid)
      stored = stored + 1
    end
  end
  -- A built mailbox keeps the expiry its seed gave both keys (a cache: it is rebuilt from Postgres once it
  -- expires); one not built yet lives as long as appends keep coming.
  if not state then
    redis.call('PEXPIRE', stream, ttl)
    redis.call('PEXPIRE', index, ttl)
  end
end
if ARGV[3] ~= '' then redis.call('PUBLISH', ARGV[3], ARGV[4]) end
return stored
