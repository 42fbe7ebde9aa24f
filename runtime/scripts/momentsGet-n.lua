-- Look up moment records (layout in runtime/engines/redis/keys.ts: hash {j, l, k, r, x}).
-- KEYS     the records
-- returns  one entry per key: the moment's JSON (j closed with its counts); '' when tombstoned (x);
--          false when not cached (no j, or no counts yet)
local out = {}
for i, key in ipairs(KEYS) do
  local r = redis.call('HMGET', key, 'j', 'l', 'k', 'x')
  if r[4] then
    out[i] = ''
  elseif r[1] and r[2] then
    out[i] = r[1] .. ',"like_count":' .. r[2] .. ',"comment_count":' .. r[3] .. '}'
  else
    out[i] = false
  end
end
return out
