"""The Lua scripts a :class:`~ctxbudget.stores.redis.RedisSnapshotStore` runs on the server, each one atomic.

Compare-and-set, compare-and-delete, append and the archive write each run as one script (``EVALSHA``), so Redis
executes them as one step against every other client; the archive range read is one script so a page of handles
and their entries are read together. The key layout they work on is described in :mod:`ctxbudget.stores.redis`.
"""

from __future__ import annotations

__all__ = ["APPEND", "DELETE", "PAGE", "PUT_ARCHIVE", "READ_ARCHIVE", "SAVE"]

# A stored version or counter that is not digits is returned as {-1, raw} instead of being compared or bumped.
# Versions are compared as decimal strings (leading zeros dropped) and bumped by HINCRBY, never as Lua numbers:
# a double stops telling versions apart at 2**53. ARGV[1] is the expected version as the client's decimal string.
SAVE = """
local raw = redis.call('HGET', KEYS[1], 'version')
if raw and not string.match(raw, '^%d+$') then return {-1, raw} end
local current = string.match(raw or '0', '^0*(%d+)$')
if current ~= ARGV[1] then return {0, current} end
redis.call('HINCRBY', KEYS[1], 'version', 1)
redis.call('HSET', KEYS[1], 'data', ARGV[2])
return {1, redis.call('HGET', KEYS[1], 'version')}
"""

DELETE = """
local raw = redis.call('HGET', KEYS[1], 'version')
if raw and not string.match(raw, '^%d+$') then return {-1, raw} end
local current = string.match(raw or '0', '^0*(%d+)$')
if current ~= ARGV[1] then return {0, current} end
redis.call('DEL', unpack(KEYS))
return {1, 0}
"""

APPEND = """
local raw = redis.call('GET', KEYS[1])
if raw and not string.match(raw, '^%d+$') then return {-1, raw} end
local last = redis.call('INCRBY', KEYS[1], #ARGV)
local first = last - #ARGV + 1
for i = 1, #ARGV do
  local seq = first + i - 1
  redis.call('ZADD', KEYS[2], seq, string.format('%d', seq) .. ':' .. ARGV[i])
end
return {1, first}
"""

# KEYS: arc, arcseq, arcids, archead; ARGV: (handle, "m" .. message id or "-", log_seq, data) quadruples.
PUT_ARCHIVE = """
local raw = redis.call('GET', KEYS[4])
if raw and not string.match(raw, '^%d+$') then return {-1, raw} end
local head = tonumber(raw or '0')
local seqs = {}
for i = 1, #ARGV, 4 do
  if redis.call('HSETNX', KEYS[1], ARGV[i], ARGV[i + 3]) == 1 then
    head = head + 1
    redis.call('ZADD', KEYS[2], head, ARGV[i])
    if ARGV[i + 1] ~= '-' then
      local id = string.sub(ARGV[i + 1], 2)
      local known = redis.call('HGET', KEYS[3], id)
      if not known or tonumber(known) > tonumber(ARGV[i + 2]) then redis.call('HSET', KEYS[3], id, ARGV[i + 2]) end
    end
    seqs[#seqs + 1] = head
  else
    seqs[#seqs + 1] = 0
  end
end
redis.call('SET', KEYS[4], head)
return {1, head, seqs}
"""

# KEYS: arcseq, arc; ARGV: after, limit. Returns flat (seq, handle, data) triples; data is false when missing.
READ_ARCHIVE = """
local found = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. ARGV[1], '+inf', 'WITHSCORES', 'LIMIT', 0, ARGV[2])
if #found == 0 then return {} end
local names = {}
for i = 1, #found, 2 do names[#names + 1] = found[i] end
local data = redis.call('HMGET', KEYS[2], unpack(names))
local out = {}
for i = 1, #names do
  out[#out + 1] = found[2 * i]
  out[#out + 1] = names[i]
  out[#out + 1] = data[i]
end
return out
"""

PAGE = 1_000  # archive entries per read script call (Lua's unpack has a stack limit)
