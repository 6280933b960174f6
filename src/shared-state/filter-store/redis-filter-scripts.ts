/**
 * The Lua scripts of the Redis filter store (redis-filter-store.ts): each one atomic, so that instances sharing the
 * store never see a filter half-written, never both pass a plan's cap, and never save a filter over another's poll.
 * A filter is the hash KEYS[1] = { s: state JSON, v: version, e: expiresAt, k: key id, a: account id }; the sorted
 * sets of a key's and an account's filters (and of all filters, for /metrics) are scored by expiresAt. `now` comes
 * from the instance (ARGV), as in the memory store: a member scored at or before it is expired.
 */

/** Sets `key`'s TTL to at least `ms` (a set lives as long as its longest-lived filter). */
const EXTEND = `
local function extend(key, ms)
  if redis.call('PTTL', key) < ms then redis.call('PEXPIRE', key, ms) end
end
`;

/**
 * KEYS: filter, byKey, byAccount, all. ARGV: now, max, json, expiresAt, ttl, id, keyId, accountId.
 * 1: added; 0: the key or the account already has `max` live filters; -1: the id exists (never, at 128 random bits).
 */
export const ADD_LUA = `${EXTEND}
local now, max, ttl = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[5])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
if redis.call('ZCARD', KEYS[2]) >= max or redis.call('ZCARD', KEYS[3]) >= max then return 0 end
if redis.call('EXISTS', KEYS[1]) == 1 then return -1 end
redis.call('HSET', KEYS[1], 's', ARGV[3], 'v', 0, 'e', ARGV[4], 'k', ARGV[7], 'a', ARGV[8])
redis.call('PEXPIRE', KEYS[1], ttl)
for i = 2, 4 do
  redis.call('ZADD', KEYS[i], ARGV[4], ARGV[6])
  extend(KEYS[i], ttl)
end
return 1
`;

/**
 * KEYS: filter, byKey, byAccount, all. ARGV: now, version read, json, expiresAt, ttl, id.
 * 1: saved (version + 1); 0: removed (it stays so); -1: saved by another poll since it was read. A filter whose expiry
 * passed while its poll waited for the node is saved all the same (idle time counts from a poll's answer; its key
 * outlives the expiry by a grace for that): it is counted again.
 */
export const UPDATE_LUA = `${EXTEND}
local ttl = tonumber(ARGV[5])
local v = redis.call('HGET', KEYS[1], 'v')
if not v then return 0 end
if v ~= ARGV[2] then return -1 end
redis.call('HSET', KEYS[1], 's', ARGV[3], 'v', tonumber(v) + 1, 'e', ARGV[4])
redis.call('PEXPIRE', KEYS[1], ttl)
for i = 2, 4 do
  redis.call('ZADD', KEYS[i], ARGV[4], ARGV[6])
  extend(KEYS[i], ttl)
end
return 1
`;

/**
 * KEYS: filter, all. ARGV: now, id, prefix (the key's and account's sets are named from the filter's own fields),
 * 'expired' to remove it only if its expiry has passed (it was met expired; another poll may have just saved it).
 * 1: removed; 0: there was no live filter.
 */
export const REMOVE_LUA = `
local f = redis.call('HMGET', KEYS[1], 'e', 'k', 'a')
if not f[1] then return 0 end
if ARGV[4] == 'expired' and tonumber(f[1]) > tonumber(ARGV[1]) then return 0 end
redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[2])
redis.call('ZREM', ARGV[3] .. 'k:' .. f[2], ARGV[2])
redis.call('ZREM', ARGV[3] .. 'a:' .. f[3], ARGV[2])
if tonumber(f[1]) <= tonumber(ARGV[1]) then return 0 end
return 1
`;

/** KEYS: sequence, list. ARGV: hash, hashes kept, ttl. The transaction's number in the network's sequence. */
export const NOTE_LUA = `
local n = redis.call('INCR', KEYS[1])
redis.call('RPUSH', KEYS[2], ARGV[1])
redis.call('LTRIM', KEYS[2], -tonumber(ARGV[2]), -1)
redis.call('PEXPIRE', KEYS[1], ARGV[3])
redis.call('PEXPIRE', KEYS[2], ARGV[3])
return n
`;

/**
 * KEYS: sequence, list. ARGV: after ('' for the sequence number alone). { seq, hashes noted after number `after`... };
 * a sequence below `after` was started again (Redis lost it): all it holds is new.
 */
export const SINCE_LUA = `
local seq = tonumber(redis.call('GET', KEYS[1]) or '0')
if ARGV[1] == '' then return { seq } end
local after = tonumber(ARGV[1])
if seq < after then after = 0 end
local fresh = math.min(seq - after, redis.call('LLEN', KEYS[2]))
if fresh <= 0 then return { seq } end
local out = redis.call('LRANGE', KEYS[2], -fresh, -1)
table.insert(out, 1, seq)
return out
`;
