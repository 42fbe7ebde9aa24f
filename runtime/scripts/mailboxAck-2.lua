-- Remove an acknowledged message from a mailbox for good (the stream holds only unacknowledged entries).
-- KEYS[1]  mailbox stream      KEYS[2] mailbox index hash (see mailboxAppend-n.lua)
-- ARGV[1]  raw message id
-- returns  1 when it was there, else 0
local sid = redis.call('HGET', KEYS[2], ARGV[1])
if not sid then return 0 end
redis.call('XDEL', KEYS[1], sid)
redis.call('HDEL', KEYS[2], ARGV[1], '#' .. ARGV[1])
return 1
