-- Renew the jobs a consumer still holds (their idle time back to 0, so no other node reclaims them), leaving alone
-- any that another consumer took over meanwhile. runtime/engines/redis/webhook-jobs.ts.
-- KEYS[1]  the jobs stream
-- ARGV[1]  the consumer group       ARGV[2]  the consumer       ARGV[3..] entry ids it believes it holds
-- returns  the entry ids it holds (renewed)
local ok, pending = pcall(redis.call, 'XPENDING', KEYS[1], ARGV[1], '-', '+', 10000, ARGV[2])
if not ok then return {} end
local mine = {}
for _, p in ipairs(pending) do mine[p[1]] = true end
local held = {}
for i = 3, #ARGV do
  if mine[ARGV[i]] then held[#held + 1] = ARGV[i] end
end
if #held > 0 then
  local args = { 'XCLAIM', KEYS[1], ARGV[1], ARGV[2], 0 }
  for _, id in ipairs(held) do args[#args + 1] = id end
  args[#args + 1] = 'JUSTID'
  redis.call(unpack(args))
end
return held
