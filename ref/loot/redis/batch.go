package redis

import (
	"context"
	"fmt"

	"github.com/onceproof/onceproof/internal/coalesce"
	goredis "github.com/redis/go-redis/v9"
)

// op is one queued Acquire or Release (Options.Batch), its key prefixed.
type op struct {
	acquire bool
	key     string
	token   string
	ms      int64
}

// batchScript runs a batch of acquires and releases in one script call:
// KEYS[i] op i's key; ARGV holds, op after op, 'a' token ms (SET NX PX) or
// 'r' token (compare-and-delete). It returns one integer per op, 1 when
// the op set or deleted its key. Ops run in order, so two on one key are
// answered as the same calls made one after another would be; the whole
// batch is atomic, which is more than each op needs and costs nothing (the
// server runs one command at a time anyway).
var batchScript = goredis.NewScript(`
local out = {}
local a = 1
for i = 1, #KEYS do
	if ARGV[a] == 'a' then
		out[i] = redis.call('SET', KEYS[i], ARGV[a + 1], 'NX', 'PX', ARGV[a + 2]) and 1 or 0
		a = a + 3
	else
		out[i] = 0
		if redis.call('GET', KEYS[i]) == ARGV[a + 1] then
			out[i] = redis.call('DEL', KEYS[i])
		end
		a = a + 2
	end
end
return out
`)

// runBatch answers a batch with one batchScript call. A failed call fails
// every op in it with the same error: outcome unknown, as loot.Lock allows.
func (l *Lock) runBatch(ctx context.Context, ops []op, rs []coalesce.Result[bool]) {
	keys := make([]string, len(ops))
	args := make([]any, 0, 3*len(ops))
	for i, o := range ops {
		keys[i] = o.key
		if o.acquire {
			args = append(args, "a", o.token, o.ms)
		} else {
			args = append(args, "r", o.token)
		}
	}
	codes, err := batchScript.Run(ctx, l.rdb, keys, args...).Int64Slice()
	if err == nil && len(codes) != len(ops) {
		err = fmt.Errorf("batch script answered %d of %d ops", len(codes), len(ops))
	}
	for i := range ops {
		if err != nil {
			rs[i].Err = err
			continue
		}
		rs[i].Val = codes[i] == 1
	}
}
