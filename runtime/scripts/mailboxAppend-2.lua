-- Append one message to a principal's mailbox and wake whoever waits on it, on any node.
-- KEYS[1]  mailbox stream: one entry per unacknowledged message {m = raw message id, p = payload JSON}
-- KEYS[2]  mailbox index hash: '~' seed state ('1' complete, 'p' partial, absent: not seeded),
--          <raw id> -> stream entry id, '#'<raw id> -> delivery count
-- ARGV[1]  raw message id   ARGV[2] payload   ARGV[3] capacity (most entries held)   ARGV[4] idle ttl ms
-- ARGV[5]  wake channel ('' to leave the wake-up to the caller)   ARGV[6] principal (the wake payload)
-- returns  1 when stored; 0 when left to Postgres (partial or full mailbox) or already there
-- A partial or full mailbox keeps the message out: it waits in Postgres and a later seed loads it.
-- A mailbox not seeded yet still takes it: the seed merges what it finds with the Postgres rows.
local state = redis.call('HGET', KEYS[2], '~')
local stored = 0
if state ~= 'p' and redis.call('HEXISTS', KEYS[2], ARGV[1]) == 0 then
  if redis.call('XLEN', KEYS[1]) >= tonumber(ARGV[3]) then
    if state then redis.call('HSET', KEYS[2], '~', 'p') end
  else
    local sid = redis.call('XADD', KEYS[1], '*', 'm', ARGV[1], 'p', ARGV[2])
    redis.call('HSET', KEYS[2], ARGV[1], sid)
    stored = 1
  end
end
redis.call('PEXPIRE', KEYS[1], ARGV[4])
redis.call('PEXPIRE', KEYS[2], ARGV[4])
if ARGV[5] ~= '' then redis.call('PUBLISH', ARGV[5], ARGV[6]) end
return stored
