-- Record members' cursors in their streams (inbox: thread 0, groups), each merged with what is remembered
-- (runtime/engines/stream-cursors.ts).
-- KEYS     per cursor the member's hash: field <thread> -> acked number, field <thread>+ -> numbers acked above it,
--          comma-separated
-- ARGV[1]  ttl ms (each hash's expiry)
-- then     per cursor four values: thread, acked, the numbers above it comma-separated ('' for none), and 1 when it is
--          only to be written where nothing is remembered for the thread (a read of Postgres, which an ack may have passed), else 0
-- returns  the number of cursors written
local written = 0
for k = 1, #KEYS do
  local key = KEYS[k]
  local a = 2 + (k - 1) * 4
  local thread, ifAbsent = ARGV[a], ARGV[a + 3]
  local was = redis.call('HGET', key, thread)
  if not (was and ifAbsent == '1') then
    local acked = tonumber(ARGV[a + 1])
    if was and tonumber(was) > acked then acked = tonumber(was) end
    local above, seen = {}, {}
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
    take(redis.call('HGET', key, thread .. '+'))
    take(ARGV[a + 2])
    table.sort(above)
    redis.call('HSET', key, thread, acked, thread .. '+', table.concat(above, ','))
    redis.call('PEXPIRE', key, ARGV[1])
    written = written + 1
  end
end
return written
