-- A feed page in one call: read several timelines, merge their newest ids, and look up the merged ids'
-- moments' JSON with one MGET. Timeline layout: feedRead-1.lua; moment JSON keys: keys.ts (momentJson).
-- Those keys are derived from the ids, so this script needs a single Redis (not Redis Cluster).
-- KEYS      the timelines
-- ARGV[1]   exclusive upper bound in BYLEX form ('(<19 digits>', or '(:' for the newest)
-- ARGV[2]   count: ids wanted          ARGV[3] show: how many of them the page shows
-- ARGV[4]   lease token recorded on a miss      ARGV[5] ttl ms of a timeline created by a miss
-- ARGV[6]   key prefix of moment JSON (that of id 42 is <prefix>0000000000000000042, the id as the
--           timelines hold it)
-- returns   {0, f1, f2, ...}: a timeline was not filled: fN is 1 if KEYS[N] was, 0 if a lease was recorded
--           {1}: fewer than count ids above the newest floor: only Postgres knows the page
--           {2, joined, n}: all n records cached: the first `show` moments' JSON joined with ','
--           {3, n, id... (n of them), entry...}: per id: its JSON, '' when tombstoned, false when not cached
local filled, missed = {}, false
for i, key in ipairs(KEYS) do
  local marker = redis.call('ZRANGE', key, '[~', '+', 'BYLEX', 'LIMIT', 0, 1)
  if #marker == 0 then
    local existed = redis.call('EXISTS', key)
    redis.call('ZADD', key, 0, 'l:' .. ARGV[4])
    if existed == 0 then redis.call('PEXPIRE', key, ARGV[5]) end
    filled[i], missed = 0, true
  else
    filled[i] = string.sub(marker[1], 2)
  end
end
if missed then
  local out = {0}
  for i = 1, #KEYS do out[i + 1] = filled[i] == 0 and 0 or 1 end
  return out
end

local count, show = tonumber(ARGV[2]), tonumber(ARGV[3])
local floor, lists, heads = '', {}, {}
for i, key in ipairs(KEYS) do
  if filled[i] > floor then floor = filled[i] end
  lists[i] = redis.call('ZRANGE', key, ARGV[1], '-', 'BYLEX', 'REV', 'LIMIT', 0, count)
  heads[i] = 1
end
-- Merge newest first, without duplicates, stopping below the floor (ids are fixed-width: string order
-- is numeric order).
local ids = {}
while #ids < count do
  local best
  for i = 1, #lists do
    local v = lists[i][heads[i]]
    if v and (not best or v > best) then best = v end
  end
  if not best or best < floor then break end
  for i = 1, #lists do
    if lists[i][heads[i]] == best then heads[i] = heads[i] + 1 end
  end
  ids[#ids + 1] = best
end
if #ids < count and floor ~= string.rep('0', 19) then return {1} end

local entries, complete = {}, true
if #ids > 0 then
  local jkeys = {}
  for i, id in ipairs(ids) do jkeys[i] = ARGV[6] .. id end
  entries = redis.call('MGET', unpack(jkeys))
  for i = 1, #ids do
    if not entries[i] or entries[i] == '' then complete = false end
  end
end
if complete then return {2, table.concat(entries, ',', 1, math.min(show, #ids)), #ids} end
local out = {3, #ids}
for i, id in ipairs(ids) do out[i + 2] = id end
for i = 1, #ids do out[#ids + 2 + i] = entries[i] end
return out
