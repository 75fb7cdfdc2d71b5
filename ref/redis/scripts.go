package redis

import goredis "github.com/redis/go-redis/v9"

// States as the scripts store them: ref.StateGranted (1) and
// ref.StateDelivered (2). A record never exists in StateNew.

// lib holds the claim and commit logic once, as Lua functions; each script
// below is lib plus one call, and batchScript is lib plus a loop, so the
// single and batched paths cannot drift apart. Every function returns the
// integer the Go side decodes:
//
//   - claim(k, pending, payload, lease, member): state*2 + created, so one
//     integer carries both answers (3: created Granted).
//   - claimDelivered(k): the same for a record born Delivered
//     (ref.DeliveredClaimer): no payload or lease to keep and no pending
//     member, since nothing will ever recover it; an existing record is
//     returned unchanged (a Granted one is never moved forward). 5: created.
//   - commit(k, pending, n, member): moves forward only; -1 when the key was
//     never claimed, 0 otherwise. The payload is dropped at Delivered:
//     nothing reads it again, and years of retention then cost the hash
//     alone.
//
// A key holding another type (another program wrote it) makes HGET fail;
// the functions return -2 then, so in a batch that one call fails
// (ErrReply) and the others are answered.
const lib = `
local function state(k)
	local s = redis.pcall('HGET', k, 's')
	if type(s) == 'table' then return nil, true end
	return s, false
end
local function claim(k, pending, payload, lease, member)
	local s, bad = state(k)
	if bad then return -2 end
	if s then return tonumber(s) * 2 end
	redis.call('HSET', k, 's', 1, 'p', payload, 'l', lease)
	redis.call('ZADD', pending, lease, member)
	return 3
end
local function claimDelivered(k)
	local s, bad = state(k)
	if bad then return -2 end
	if s then return tonumber(s) * 2 end
	redis.call('HSET', k, 's', 2)
	return 5
end
local function commit(k, pending, n, member)
	local s, bad = state(k)
	if bad then return -2 end
	if not s then return -1 end
	n = tonumber(n)
	if n > tonumber(s) then
		redis.call('HSET', k, 's', n)
		if n >= 2 then
			redis.call('HDEL', k, 'p', 'l')
			redis.call('ZREM', pending, member)
		end
	end
	return 0
end
`

// claimScript: KEYS[1] the claim hash, KEYS[2] the pending set; ARGV[1]
// payload, ARGV[2] lease (Unix ms), ARGV[3] the key's hex (the set member).
var claimScript = goredis.NewScript(lib + `return claim(KEYS[1], KEYS[2], ARGV[1], ARGV[2], ARGV[3])`)

// claimDeliveredScript: KEYS[1] the claim hash. BeginDelivered, the one
// command of a seed-form Settle.
var claimDeliveredScript = goredis.NewScript(lib + `return claimDelivered(KEYS[1])`)

// commitScript: KEYS[1] the claim hash, KEYS[2] the pending set; ARGV[1] the
// new state, ARGV[2] the key's hex.
var commitScript = goredis.NewScript(lib + `return commit(KEYS[1], KEYS[2], ARGV[1], ARGV[2])`)

// batchScript runs a batch of claims and commits in one script call:
// KEYS[1] the pending set, KEYS[1+i] op i's claim hash; ARGV holds, op
// after op, a kind and its arguments: 'c' payload lease member (claim),
// 'd' (claim delivered: none), 'm' state member (commit). Returns one
// integer per op, as the single scripts would, in order: ops on one key are
// answered as the same calls made one after another would be (the first
// claim creates, the second finds it).
//
// One script for the whole batch rather than a pipeline of one EVALSHA per
// op: the server parses one command and enters Lua once instead of per op
// (see BenchmarkSettle for what that measured). The batch is atomic as a
// whole, which is more than each op needs and costs nothing extra: Redis
// runs one command at a time anyway.
var batchScript = goredis.NewScript(lib + `
local pending = KEYS[1]
local out = {}
local a = 1
for i = 2, #KEYS do
	local kind = ARGV[a]
	if kind == 'c' then
		out[i - 1] = claim(KEYS[i], pending, ARGV[a + 1], ARGV[a + 2], ARGV[a + 3])
		a = a + 4
	elseif kind == 'd' then
		out[i - 1] = claimDelivered(KEYS[i])
		a = a + 1
	else
		out[i - 1] = commit(KEYS[i], pending, ARGV[a + 1], ARGV[a + 2])
		a = a + 3
	end
end
return out
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
