package redis

import goredis "github.com/redis/go-redis/v9"

// States as the scripts store them: ref.StateGranted (1) and
// ref.StateDelivered (2). A record never exists in StateNew.

// claimScript: KEYS[1] the claim hash, KEYS[2] the pending set; ARGV[1]
// payload, ARGV[2] lease (Unix ms), ARGV[3] the key's hex (the set member).
// Returns state*2 + created, so one integer carries both answers.
var claimScript = goredis.NewScript(`
local s = redis.call('HGET', KEYS[1], 's')
if s then return tonumber(s) * 2 end
redis.call('HSET', KEYS[1], 's', 1, 'p', ARGV[1], 'l', ARGV[2])
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[3])
return 3
`)

// claimDeliveredScript: KEYS[1] the claim hash. The claim script for a
// record born Delivered (ref.DeliveredClaimer): no payload or lease to keep
// and no pending-set member, since nothing will ever recover it. An existing
// record is returned unchanged (a Granted one is never moved forward).
// Returns state*2 + created, as claimScript.
var claimDeliveredScript = goredis.NewScript(`
local s = redis.call('HGET', KEYS[1], 's')
if s then return tonumber(s) * 2 end
redis.call('HSET', KEYS[1], 's', 2)
return 5
`)

// commitScript: KEYS[1] the claim hash, KEYS[2] the pending set; ARGV[1] the
// new state, ARGV[2] the key's hex. Moves forward only; returns -1 when the
// key was never claimed, 0 otherwise. The payload is dropped at Delivered:
// nothing reads it again, and years of retention then cost the hash alone.
var commitScript = goredis.NewScript(`
local s = redis.call('HGET', KEYS[1], 's')
if not s then return -1 end
local n = tonumber(ARGV[1])
if n > tonumber(s) then
	redis.call('HSET', KEYS[1], 's', n)
	if n >= 2 then
		redis.call('HDEL', KEYS[1], 'p', 'l')
		redis.call('ZREM', KEYS[2], ARGV[2])
	end
end
return 0
`)

// pendingScript: KEYS[1] the pending set; ARGV[1] now (Unix ms), ARGV[2]
// limit, ARGV[3] the claim hash prefix. Returns member, payload, lease
// triples, read in one atomic step so a record is never half listed.
var pendingScript = goredis.NewScript(`
local ms = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
local out = {}
for _, m in ipairs(ms) do
	local r = redis.call('HMGET', ARGV[3] .. m, 'p', 'l')
	out[#out + 1] = m
	out[#out + 1] = r[1] or ''
	out[#out + 1] = r[2] or '0'
end
return out
`)

// deliverScript: KEYS[1] the grant key, KEYS[2] the ledger list, KEYS[3] the
// claim hash, KEYS[4] the pending set; ARGV[1] payload, ARGV[2] the key's
// hex. SET NX on the grant key decides whether the effect (appending the
// grant to the ledger) happens; the claim moves to Delivered in the same
// step. Returns 1 when this call applied the effect.
var deliverScript = goredis.NewScript(`
local fresh = redis.call('SET', KEYS[1], ARGV[1], 'NX')
if fresh then redis.call('RPUSH', KEYS[2], ARGV[2] .. ARGV[1]) end
local s = redis.call('HGET', KEYS[3], 's')
if s and tonumber(s) < 2 then
	redis.call('HSET', KEYS[3], 's', 2)
	redis.call('HDEL', KEYS[3], 'p', 'l')
	redis.call('ZREM', KEYS[4], ARGV[2])
end
if fresh then return 1 end
return 0
`)
