package redis

import (
	"context"
	"fmt"

	"github.com/onceproof/onceproof/internal/coalesce"
	"github.com/onceproof/onceproof/ref"
)

// op is one queued Begin (claim), BeginDelivered (claim and delivered) or
// Commit.
type op struct {
	claim     bool
	delivered bool // with claim: BeginDelivered
	key       ref.Key
	payload   []byte
	lease     int64
	st        ref.State
}

// opResult carries the script's integer reply.
type opResult struct{ code int64 }

// runBatch answers a batch of claims and commits with one batchScript call
// (see its doc for why one script and not a pipeline of one per op). A
// failed call fails every op in it with the same error ("outcome unknown":
// the script may have run); an op whose key holds another type fails alone
// (code -2, which Begin and Commit report as ErrReply).
func (s *Store) runBatch(ctx context.Context, ops []op, rs []coalesce.Result[opResult]) {
	keys := make([]string, 1, 1+len(ops))
	keys[0] = s.pending
	args := make([]any, 0, 4*len(ops))
	for _, o := range ops {
		if o.claim && o.delivered {
			// No member: a record born Delivered never joins the
			// pending set. One allocation for the key, none for the
			// constant kind.
			keys = append(keys, s.claimKeyOf(o.key))
			args = append(args, "d")
			continue
		}
		m := member(o.key)
		keys = append(keys, s.claimKey(m))
		if o.claim {
			args = append(args, "c", o.payload, o.lease, m)
		} else {
			args = append(args, "m", int(o.st), m)
		}
	}
	codes, err := batchScript.Run(ctx, s.rdb, keys, args...).Int64Slice()
	if err == nil && len(codes) != len(ops) {
		err = fmt.Errorf("%w: batch script answered %d of %d ops", ErrReply, len(codes), len(ops))
	}
	for i := range ops {
		if err != nil {
			rs[i].Err = err
			continue
		}
		rs[i].Val.code = codes[i]
	}
}
