/**
 * The Lua scripts of redis-answers.ts: each a step that must not interleave with another instance's (a lookup and
 * its lease; an answer kept with its bytes counted and the budget held), in one round trip.
 *
 * Keys of a prefix P: `P a:<key>` an answer (expiring with it), `P al:<key>` the lease of filling it, `P ai` the
 * answers by expiry (sorted set), `P as` their sizes (hash), `P ab` their bytes together. The scripts name answer
 * keys they are not given (an evicted answer's): one Redis, or one node of a cluster per prefix.
 */

/** KEYS: answer, lease. ARGV: lease ms. The answer's text; else 1 (lease taken) or 0 (held by another). */
export const FIND_LUA = `
local v = redis.call('GET', KEYS[1])
if v then return v end
if redis.call('SET', KEYS[2], '1', 'NX', 'PX', ARGV[1]) then return 1 end
return 0
`;

/** Forgets one answer and gives its bytes back (`pre`: the answers' key prefix). */
const FORGET = `
local function forget(idx, sizes, total, pre, m)
  local s = redis.call('HGET', sizes, m)
  if s then
    redis.call('DECRBY', total, s)
    redis.call('HDEL', sizes, m)
  end
  redis.call('ZREM', idx, m)
  redis.call('DEL', pre .. m)
end
`;

/**
 * KEYS: index, sizes, bytes, lease. ARGV: key, text, ttl ms, now ms, byte budget, size, answers' prefix, channel.
 * What expired gives its bytes back (a bounded number per call), the answer is kept, then the soonest to expire
 * (but this one) go until the budget holds; the lease goes and the waiters hear of it.
 */
export const KEEP_LUA = `${FORGET}
local idx, sizes, total, pre = KEYS[1], KEYS[2], KEYS[3], ARGV[7]
for _, m in ipairs(redis.call('ZRANGEBYSCORE', idx, '-inf', ARGV[4], 'LIMIT', 0, 64)) do forget(idx, sizes, total, pre, m) end
forget(idx, sizes, total, pre, ARGV[1])
redis.call('SET', pre .. ARGV[1], ARGV[2], 'PX', ARGV[3])
redis.call('ZADD', idx, tonumber(ARGV[4]) + tonumber(ARGV[3]), ARGV[1])
redis.call('HSET', sizes, ARGV[1], ARGV[6])
local bytes = redis.call('INCRBY', total, ARGV[6])
local max, n = tonumber(ARGV[5]), 0
while bytes > max and n < 256 do
  -- Answers kept in the same millisecond with the same ttl expire together, and a tie is broken by the key's text:
  -- the answer just kept is never the one to go.
  local first = redis.call('ZRANGE', idx, 0, 1)
  local m = first[1] == ARGV[1] and first[2] or first[1]
  if not m then break end
  forget(idx, sizes, total, pre, m)
  bytes = tonumber(redis.call('GET', total) or '0')
  n = n + 1
end
redis.call('DEL', KEYS[4])
redis.call('PUBLISH', ARGV[8], ARGV[1])
return bytes
`;

/** KEYS: lease. ARGV: key, channel. The lease goes; waiters hear of it (and fetch for themselves). */
export const RELEASE_LUA = `
redis.call('DEL', KEYS[1])
redis.call('PUBLISH', ARGV[2], ARGV[1])
`;

/** KEYS: index, sizes, bytes. ARGV: answers' prefix, then the keys to forget. */
export const FORGET_LUA = `${FORGET}
for i = 2, #ARGV do forget(KEYS[1], KEYS[2], KEYS[3], ARGV[1], ARGV[i]) end
return #ARGV - 1
`;
