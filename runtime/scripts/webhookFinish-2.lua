-- A delivery job is done (its endpoint removed or disabled): acknowledged and deleted, and the agent's record of it
-- dropped if it still names this job. runtime/engines/redis/webhook-jobs.ts.
-- KEYS[1]  the jobs stream          KEYS[2]  the hash agent -> its job's entry id
-- ARGV[1]  the consumer group       ARGV[2]  the entry id       ARGV[3]  the agent
-- returns  1
pcall(redis.call, 'XACK', KEYS[1], ARGV[1], ARGV[2])
redis.call('XDEL', KEYS[1], ARGV[2])
if redis.call('HGET', KEYS[2], ARGV[3]) == ARGV[2] then redis.call('HDEL', KEYS[2], ARGV[3]) end
return 1
