-- Append a committed message to its stream's log and announce it to every node, in one step.
-- KEYS[1]  the stream's log: a Redis stream of entries {s: number, i: message id, p: JSON payload}
-- ARGV[1]  number   ARGV[2] message id   ARGV[3] payload   ARGV[4] entries kept   ARGV[5] idle ms (key expiry)
-- ARGV[6]  pub/sub channel   ARGV[7] what precedes the payload in the announcement
-- returns  1
redis.call('XADD', KEYS[1], 'MAXLEN', ARGV[4], '*', 's', ARGV[1], 'i', ARGV[2], 'p', ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
redis.call('PUBLISH', ARGV[6], ARGV[7] .. ARGV[3])
return 1
