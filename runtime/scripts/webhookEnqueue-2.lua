-- Queue a delivery job for each agent that has none (queued or held), creating the consumer group if it is missing
-- (a new deployment, or after a flush). runtime/engines/redis/webhook-jobs.ts.
-- KEYS[1]  the jobs stream          KEYS[2]  the hash agent -> its job's entry id
-- ARGV[1]  the consumer group       ARGV[2..] agent ids
-- returns  how many jobs were queued
pcall(redis.call, 'XGROUP', 'CREATE', KEYS[1], ARGV[1], '0', 'MKSTREAM')
local n = 0
for i = 2, #ARGV do
  local have = redis.call('HGET', KEYS[2], ARGV[i])
  -- a job named but no longer in the stream (deleted, or the stream lost) is queued again
  if not have or #redis.call('XRANGE', KEYS[1], have, have) == 0 then
    local id = redis.call('XADD', KEYS[1], '*', 'a', ARGV[i])
    redis.call('HSET', KEYS[2], ARGV[i], id)
    n = n + 1
  end
end
return n
