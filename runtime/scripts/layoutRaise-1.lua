-- The keyspace's layout number (runtime/release.ts LAYOUT): raised to ARGV[1] when it is lower or not set (a new
-- keyspace, or one Redis lost), never lowered.
-- KEYS[1]  layout: string
-- ARGV[1]  this node's layout
-- returns  the layout stored before this call (ARGV[1] when none was)
local stored = redis.call('GET', KEYS[1])
local mine = tonumber(ARGV[1])
local before = stored and tonumber(stored) or mine
if before < mine or not stored then redis.call('SET', KEYS[1], ARGV[1]) end
return before
