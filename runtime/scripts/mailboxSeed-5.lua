-- Build a mailbox from Postgres rows, merged with whatever was appended while it was missing, leaving out what was
-- acknowledged since the rows were read (the tombstones mailboxAck-n.lua keeps).
-- A mailbox with no seed state at all was never built or was lost (Redis flushed, restarted, expired, evicted):
-- a row it does not hold may have been delivered before the loss, from the lost mailbox, with a count that had not
-- reached Postgres yet; it is counted as delivered at least once, so its next delivery says 2 (a redelivery
-- flagged as possible is harmless to a consumer; one passed off as a first delivery is not). What the stream
-- holds (appended while not built) keeps its own count.
-- KEYS[1]  mailbox stream      KEYS[2] mailbox index hash (see mailboxAppend-n.lua)
-- KEYS[3], KEYS[4], KEYS[5]  the three ack tombstone sets (mailboxAck-n.lua)
-- ARGV[1]  state to record: '1' when the rows are every unacknowledged message, 'p' when Postgres has more
-- ARGV[2]  capacity            ARGV[3] idle ttl ms     ARGV[4] refill mark (see mailboxFetch-n.lua)
-- ARGV[5..] triples, oldest first: raw message id, payload, deliveries recorded in Postgres
-- returns  the number of entries now held, or -1 when the mailbox did not need seeding (someone else did it)
local state = redis.call('HGET', KEYS[2], '~')
if state and redis.call('EXISTS', KEYS[1]) == 1 then
  if state ~= 'p' or redis.call('XLEN', KEYS[1]) >= tonumber(ARGV[4]) then return -1 end
end
local lost = not state or redis.call('EXISTS', KEYS[1]) == 0
local cap = tonumber(ARGV[2])
local byId = {}
local ids = {}
local function acked(mid)
  return redis.call('SISMEMBER', KEYS[3], mid) == 1 or redis.call('SISMEMBER', KEYS[4], mid) == 1
    or redis.call('SISMEMBER', KEYS[5], mid) == 1
end
for i = 5, #ARGV, 3 do
  local mid = ARGV[i]
  if not acked(mid) then
    byId[mid] = { ARGV[i + 1], tonumber(ARGV[i + 2]), lost }
    ids[#ids + 1] = mid
  end
end
local rows = redis.call('XRANGE', KEYS[1], '-', '+')
for _, e in ipairs(rows) do
  local f = e[2]
  local mid, payload
  for i = 1, #f, 2 do
    if f[i] == 'm' then mid = f[i + 1] elseif f[i] == 'p' then payload = f[i + 1] end
  end
  local seen = tonumber(redis.call('HGET', KEYS[2], '#' .. mid) or '0')
  local cur = byId[mid]
  if cur then
    cur[3] = false
    if seen > cur[2] then cur[2] = seen end
  elseif not acked(mid) then
    byId[mid] = { payload, seen, false }
    ids[#ids + 1] = mid
  end
end
for _, mid in ipairs(ids) do
  local e = byId[mid]
  if e[3] and e[2] < 1 then e[2] = 1 end
end
-- raw ids are decimal strings of up to 19 digits: compare by length, then as text
table.sort(ids, function(a, b)
  if #a ~= #b then return #a < #b end
  return a < b
end)
local newState = ARGV[1]
if #ids > cap then newState = 'p' end
redis.call('DEL', KEYS[1], KEYS[2])
local n = math.min(#ids, cap)
local sid
for i = 1, n do
  local mid = ids[i]
  local e = byId[mid]
  sid = redis.call('XADD', KEYS[1], '*', 'm', mid, 'p', e[1])
  redis.call('HSET', KEYS[2], mid, sid)
  if e[2] > 0 then redis.call('HSET', KEYS[2], '#' .. mid, e[2]) end
end
if sid then redis.call('HSET', KEYS[2], 'l', sid) end
if n == 0 then
  -- an empty stream still marks the mailbox as present (no 'l': that entry is no reader's cursor)
  local empty = redis.call('XADD', KEYS[1], '*', 'm', '0', 'p', '')
  redis.call('XDEL', KEYS[1], empty)
end
redis.call('HSET', KEYS[2], '~', newState)
redis.call('PEXPIRE', KEYS[1], ARGV[3])
redis.call('PEXPIRE', KEYS[2], ARGV[3])
return n
