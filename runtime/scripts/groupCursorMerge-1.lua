-- Record a member's cursor in a group, merged with what is remembered (runtime/engines/group-cursors.ts).
-- KEYS[1]  the member's cursors: hash, field <thread> -> acked number, field <thread>+ -> numbers acked above it, comma-separated
-- ARGV[1]  thread   ARGV[2] acked   ARGV[3] numbers above it, comma-separated ('' for none)
-- ARGV[4]  1: only when nothing is remembered for the thread   ARGV[5] ttl ms (key expiry)
-- returns  1 when written, 0 when not (seed only, and a cursor was remembered)
local was = redis.call('HGET', KEYS[1], ARGV[1])
if was and ARGV[4] == '1' then return 0 end
local acked = tonumber(ARGV[2])
if was and tonumber(was) > acked then acked = tonumber(was) end
local above = {}
local seen = {}
local function take(csv)
  if not csv or csv == '' then return end
  for s in string.gmatch(csv, '[^,]+') do
    local n = tonumber(s)
    if n > acked and not seen[n] then
      seen[n] = true
      above[#above + 1] = n
    end
  end
end
take(redis.call('HGET', KEYS[1], ARGV[1] .. '+'))
take(ARGV[3])
table.sort(above)
redis.call('HSET', KEYS[1], ARGV[1], acked, ARGV[1] .. '+', table.concat(above, ','))
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return 1
