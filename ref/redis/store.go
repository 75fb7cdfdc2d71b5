package redis

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/onceproof/onceproof/internal/coalesce"
	"github.com/onceproof/onceproof/internal/redisstore"
	"github.com/onceproof/onceproof/ref"
	goredis "github.com/redis/go-redis/v9"
)

// Errors this package returns (wrapped; test with errors.Is). Stores also
// return ref.ErrNotFound, ref.ErrClosed and the context's error; any other
// error means "outcome unknown" as ref.Store documents.
var (
	// ErrBadOptions: Open was given invalid options.
	ErrBadOptions = errors.New("redis: invalid options")
	// ErrReply: the server answered something the scripts never return
	// (another program wrote our keys, or a proxy mangled the reply).
	ErrReply = errors.New("redis: unexpected reply")
	// ErrNotDurable: Open could not confirm that the server persists every
	// write before answering it (appendonly yes, appendfsync always):
	// either its settings are weaker, or it refuses CONFIG GET (renamed,
	// disabled or denied by ACL) so they cannot be read. The message says
	// which. Options.AllowWeakDurability skips the check.
	ErrNotDurable = errors.New("redis: server not confirmed durable")
)

// Options configures Open. The zero value is valid.
type Options struct {
	// Prefix starts every key this store writes, so several stores (or
	// tests) share one Redis. Default "onceproof:".
	Prefix string
	// Batch sends the concurrent Begin, BeginDelivered and Commit calls on
	// this Store as one script call per batch. Turn it on where many
	// goroutines call one Store at once: the server then parses one command
	// and enters Lua once for many claims. A batch of one adds a hand-off
	// to a worker goroutine and nothing else.
	Batch bool
	// BatchWorkers is how many batches may be in flight at once (default
	// 2; used only with Batch). With two, one batch is at the server while
	// the next is being built; with one, the server and the worker take
	// turns idling; with more, the callers are split into batches too
	// small to pay. Change it only after measuring with BenchmarkSettle
	// -redisworkers on your own hosts (its doc has the measurements behind
	// the default).
	BatchWorkers int
	// MaxBatch bounds one batch (default 256: more than the 64 concurrent
	// callers the benchmarks run, small enough that one script call's
	// arguments and replies stay a few kilobytes and it holds the
	// single-threaded server for well under a millisecond).
	MaxBatch int
	// PoolSize is the client's connection pool size (default: go-redis's,
	// 10 per CPU). Without Batch every call holds a connection for its
	// round trip, so C concurrent callers want PoolSize >= C or they queue
	// for connections; with Batch each worker uses one.
	PoolSize int
	// AllowWeakDurability makes Open skip its persistence check, which
	// otherwise refuses (ErrNotDurable) a server that does not run with
	// appendonly yes and appendfsync always, or that refuses CONFIG GET.
	//
	// What a weaker server loses on a crash (a Redis process crash or a
	// power loss, not a client's): every write it answered but had not
	// yet made durable, up to about a second of them with appendfsync
	// everysec and everything since the last snapshot without appendonly.
	// A lost claim is a key the store has forgotten: a retry or replay of
	// that settlement claims it again and delivers again, so it is
	// credited twice unless the Sink is idempotent by key in a database
	// that did not lose it (the Sink of this package keeps its grant keys
	// in the same Redis and forgets them too). Set it for a cache-only or
	// test server, or when the server hides CONFIG and its operator has
	// confirmed appendfsync always.
	AllowWeakDurability bool
	// Config, if set, adjusts the client options parsed from the URL
	// (dialer, TLS, timeouts, ...) before the client is created. Setting
	// MaxRetries there brings back transparent retries; see Open
	// for why they are off.
	Config func(*goredis.Options)
	_      struct{}
}

// Store is a ref.PendingStore on Redis. Safe for concurrent use.
//
// The keys, each under Options.Prefix (default "onceproof:"), where hex is
// the 32 lowercase hex digits of ref.Key.Bytes (the full 128 bits: a 64-bit
// fingerprint collision is two claims, never a lost settlement):
//
//	prefix+"c:"+hex   hash, one claim: s state (1 Granted, 2 Delivered);
//	                  p payload and l lease (Unix ms) while Granted
//	prefix+"pending"  sorted set: hex of each Granted claim, scored by lease
//	prefix+"g:"+hex   string, the Sink's grant key: the payload applied
//	prefix+"ledger"   list, the Sink's ledger: hex+payload per grant, in order
//
// The scripts touch keys derived from their arguments, which standalone
// Redis and a single-shard deployment allow; Redis Cluster is not
// supported.
type Store struct {
	rdb     *goredis.Client
	prefix  string
	pending string // the sorted set of Granted claims, by lease
	closed  atomic.Bool
	batch   *coalesce.Batcher[op, opResult] // nil unless Options.Batch
}

var (
	_ ref.PendingStore     = (*Store)(nil)
	_ ref.DeliveredClaimer = (*Store)(nil)
)

// Open connects to the server at url (redis://[user:password@]host:port/db),
// checks that it answers and, unless Options.AllowWeakDurability, that it
// persists every write before answering (CONFIG GET appendonly and
// appendfsync: yes and always); otherwise it returns an error wrapping
// ErrNotDurable that names the setting or the refused command. ctx bounds
// the checks.
//
// Durability is Redis's: a claim survives a Redis crash only if the server
// runs with appendonly yes and appendfsync always (everysec can lose the last
// second of claims, and a lost claim can be granted again), hence the
// check. The client does not retry
// commands on its own (MaxRetries -1): a retried claim whose first attempt
// landed would report created=false to the node that created it.
//
// Use:
//
//	st, err := redis.Open(ctx, "redis://127.0.0.1:6379/0", redis.Options{Prefix: "game:", Batch: true})
//	settler := ref.NewSettler(ref.NewWindow(ttl, shards), st, ref.WithSink(st.Sink()))
func Open(ctx context.Context, url string, opts Options) (*Store, error) {
	if opts.Prefix == "" {
		opts.Prefix = "onceproof:"
	}
	if opts.BatchWorkers == 0 {
		opts.BatchWorkers = 2
	}
	if opts.MaxBatch == 0 {
		opts.MaxBatch = 256
	}
	if opts.BatchWorkers < 1 || opts.MaxBatch < 1 || opts.PoolSize < 0 {
		return nil, fmt.Errorf("%w: BatchWorkers %d, MaxBatch %d, PoolSize %d", ErrBadOptions, opts.BatchWorkers, opts.MaxBatch, opts.PoolSize)
	}
	// No transparent retries (see Open), and callers' deadlines
	// bound the socket reads and writes too.
	rdb, err := redisstore.NewClient(ctx, url, opts.PoolSize, opts.Config)
	if err != nil {
		return nil, fmt.Errorf("redis: open: %w", err)
	}
	if !opts.AllowWeakDurability {
		if err := checkDurable(ctx, rdb, rdb.Options().Addr); err != nil {
			rdb.Close()
			return nil, err
		}
	}
	s := &Store{rdb: rdb, prefix: opts.Prefix, pending: opts.Prefix + "pending"}
	if opts.Batch {
		s.batch = coalesce.New(s.runBatch, coalesce.Options{Workers: opts.BatchWorkers, MaxBatch: opts.MaxBatch})
	}
	return s, nil
}

// checkDurable reads the server's AOF settings. A glob rather than two
// names: CONFIG GET takes one pattern before Redis 7.
func checkDurable(ctx context.Context, rdb *goredis.Client, addr string) error {
	cfg, err := rdb.ConfigGet(ctx, "append*").Result()
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("redis: open %s: %w", addr, err)
		}
		return fmt.Errorf("%w: %s refused CONFIG GET (%v), so its appendonly and appendfsync cannot be checked (renamed, disabled or denied by ACL?); "+
			"if its operator confirms appendonly yes and appendfsync always, set Options.AllowWeakDurability", ErrNotDurable, addr, err)
	}
	if v := cfg["appendonly"]; v != "yes" {
		return fmt.Errorf("%w: %s runs with appendonly %s (want yes, with appendfsync always): a crash loses every claim since the last snapshot; "+
			"set Options.AllowWeakDurability to accept that", ErrNotDurable, addr, v)
	}
	if v := cfg["appendfsync"]; v != "always" {
		return fmt.Errorf("%w: %s runs with appendfsync %s (want always): a crash loses the claims not yet fsynced (up to about a second with everysec); "+
			"set Options.AllowWeakDurability to accept that", ErrNotDurable, addr, v)
	}
	return nil
}

// Client returns the store's client (for the caller's own keys).
func (s *Store) Client() *goredis.Client { return s.rdb }

// Prefix returns the prefix of every key the store writes.
func (s *Store) Prefix() string { return s.prefix }

// Close stops the batcher and closes the client. Later calls return
// ref.ErrClosed. Idempotent.
func (s *Store) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	if s.batch != nil {
		s.batch.Close()
	}
	if err := s.rdb.Close(); err != nil && !errors.Is(err, goredis.ErrClosed) {
		return fmt.Errorf("redis: close: %w", err)
	}
	return nil
}

// member is the key as it appears in the pending set and after the prefix.
func member(k ref.Key) string {
	b := k.Bytes()
	return hex.EncodeToString(b[:])
}

func (s *Store) claimKey(m string) string { return s.prefix + "c:" + m }

// claimKeyOf is claimKey(member(k)) in one allocation.
func (s *Store) claimKeyOf(k ref.Key) string {
	b := k.Bytes()
	buf := make([]byte, len(s.prefix)+2+2*len(b))
	n := copy(buf, s.prefix)
	n += copy(buf[n:], "c:")
	hex.Encode(buf[n:], b[:])
	return string(buf)
}

// leaseMillis is the lease as the scripts keep it. Millisecond precision is
// what a sorted-set score holds exactly (scores are doubles: integers up to
// 2^53 ms, year 287396, are exact; year 1, the zero time, is -6.2e13).
func leaseMillis(t time.Time) int64 { return t.UnixMilli() }

func (s *Store) wrap(op string, err error) error {
	if errors.Is(err, coalesce.ErrClosed) || errors.Is(err, goredis.ErrClosed) || s.closed.Load() && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("redis: %s: %w", op, ref.ErrClosed)
	}
	return fmt.Errorf("redis: %s: %w", op, err)
}

// check refuses calls on a closed store or with a done context.
func (s *Store) check(ctx context.Context, op string) error {
	if s.closed.Load() {
		return s.wrap(op, ref.ErrClosed)
	}
	if err := ctx.Err(); err != nil {
		return s.wrap(op, err)
	}
	return nil
}

// Begin implements ref.Store.
func (s *Store) Begin(ctx context.Context, c ref.Claim) (ref.State, bool, error) {
	return s.claim(ctx, "begin", c, false)
}

// BeginDelivered implements ref.DeliveredClaimer: one script claims the key
// in StateDelivered, so the seed-form Settle is one round trip.
func (s *Store) BeginDelivered(ctx context.Context, c ref.Claim) (ref.State, bool, error) {
	return s.claim(ctx, "begin delivered", c, true)
}

func (s *Store) claim(ctx context.Context, name string, c ref.Claim, delivered bool) (ref.State, bool, error) {
	if err := s.check(ctx, name); err != nil {
		return ref.StateNew, false, err
	}
	var (
		code int64
		err  error
	)
	switch {
	case s.batch != nil:
		var r opResult
		r, err = s.batch.Do(ctx, op{claim: true, delivered: delivered, key: c.Key, payload: c.Payload, lease: leaseMillis(c.LeaseUntil)})
		code = r.code
	case delivered:
		code, err = claimDeliveredScript.Run(ctx, s.rdb, []string{s.claimKeyOf(c.Key)}).Int64()
	default:
		m := member(c.Key)
		code, err = claimScript.Run(ctx, s.rdb, []string{s.claimKey(m), s.pending}, c.Payload, leaseMillis(c.LeaseUntil), m).Int64()
	}
	if err != nil {
		return ref.StateNew, false, s.wrap(name, err)
	}
	born := ref.StateGranted
	if delivered {
		born = ref.StateDelivered
	}
	st, created := ref.State(code/2), code%2 == 1
	if st != ref.StateGranted && st != ref.StateDelivered || created && st != born {
		return ref.StateNew, false, fmt.Errorf("redis: %s %v: %w: claim script returned %d", name, c.Key, ErrReply, code)
	}
	return st, created, nil
}

// Commit implements ref.Store.
func (s *Store) Commit(ctx context.Context, key ref.Key, st ref.State) error {
	if err := s.check(ctx, "commit"); err != nil {
		return err
	}
	var (
		code int64
		err  error
	)
	if s.batch != nil {
		var r opResult
		r, err = s.batch.Do(ctx, op{key: key, st: st})
		code = r.code
	} else {
		m := member(key)
		code, err = commitScript.Run(ctx, s.rdb, []string{s.claimKey(m), s.pending}, int(st), m).Int64()
	}
	switch {
	case err != nil:
		return s.wrap("commit", err)
	case code == -1:
		return fmt.Errorf("redis: commit %v: %w", key, ref.ErrNotFound)
	case code != 0:
		return fmt.Errorf("redis: commit %v: %w: commit script returned %d", key, ErrReply, code)
	}
	return nil
}

// Pending implements ref.PendingStore.
func (s *Store) Pending(ctx context.Context, now time.Time, limit int) ([]ref.Record, error) {
	if err := s.check(ctx, "pending"); err != nil {
		return nil, err
	}
	if limit <= 0 {
		return nil, nil
	}
	res, err := pendingScript.Run(ctx, s.rdb, []string{s.pending}, leaseMillis(now), limit, s.prefix+"c:").Slice()
	if err != nil {
		return nil, s.wrap("pending", err)
	}
	if len(res)%3 != 0 {
		return nil, fmt.Errorf("redis: pending: %w: %d values, not triples", ErrReply, len(res))
	}
	out := make([]ref.Record, 0, len(res)/3)
	for i := 0; i < len(res); i += 3 {
		m, _ := res[i].(string)
		p, _ := res[i+1].(string)
		l, _ := res[i+2].(string)
		kb, err := hex.DecodeString(m)
		if err != nil || len(kb) != 16 {
			return nil, fmt.Errorf("redis: pending: %w: member %q is not a 32-digit hex key", ErrReply, m)
		}
		ms, err := strconv.ParseInt(l, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("redis: pending: %w: lease %q of %s", ErrReply, l, m)
		}
		out = append(out, ref.Record{
			Key:        ref.KeyFromBytes([16]byte(kb)),
			State:      ref.StateGranted,
			Payload:    []byte(p),
			LeaseUntil: time.UnixMilli(ms).UTC(),
		})
	}
	return out, nil
}
