package redis

import (
	"context"

	"github.com/onceproof/onceproof/internal/coalesce"
	"github.com/onceproof/onceproof/ref"
	goredis "github.com/redis/go-redis/v9"
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

// runBatch sends a batch of claims and commits as one pipeline. A pipeline
// is not a transaction: each script stays atomic on its own, and Redis runs
// them in order, so two claims of one key in a batch are answered exactly as
// two separate calls would be (the first creates, the second finds it).
func (s *Store) runBatch(ctx context.Context, ops []op, rs []coalesce.Result[opResult]) {
	cmds := make([]*goredis.Cmd, len(ops))
	pipe := s.rdb.Pipeline()
	for i, o := range ops {
		cmds[i] = s.queue(ctx, pipe, o, true)
	}
	_, _ = pipe.Exec(ctx) // per-command errors are read below
	var retry []int
	for i, c := range cmds {
		// NOSCRIPT: the server lost its script cache (restart, SCRIPT
		// FLUSH). The script did not run, so running it again is safe.
		if goredis.HasErrorPrefix(c.Err(), "NOSCRIPT") {
			retry = append(retry, i)
			continue
		}
		rs[i].Val.code, rs[i].Err = c.Int64()
	}
	for _, i := range retry {
		c := s.queue(ctx, s.rdb, ops[i], false)
		rs[i].Val.code, rs[i].Err = c.Int64()
	}
}

// queue adds o's script to c (a pipeline, or the client itself when sha is
// false: Run then loads the script if needed).
func (s *Store) queue(ctx context.Context, c goredis.Scripter, o op, sha bool) *goredis.Cmd {
	m := member(o.key)
	keys := []string{s.claimKey(m), s.pending}
	script, args := commitScript, []any{int(o.st), m}
	switch {
	case o.claim && o.delivered:
		keys, script, args = keys[:1], claimDeliveredScript, nil
	case o.claim:
		script, args = claimScript, []any{o.payload, o.lease, m}
	}
	if sha {
		return script.EvalSha(ctx, c, keys, args...)
	}
	return script.Run(ctx, c, keys, args...)
}
