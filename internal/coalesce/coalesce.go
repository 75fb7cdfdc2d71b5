// Package coalesce turns many concurrent single calls into few batched ones:
// callers Do one request each, a few worker goroutines take whatever is
// queued (up to a maximum) and run it as one batch, one round trip to the
// database instead of one per request. Nothing waits for a batch to fill:
// at concurrency 1 a batch holds one request, and Batcher says what that
// costs.
package coalesce

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
)

// ErrClosed is returned by Do after Close, and to requests still queued when
// Close ran.
var ErrClosed = errors.New("coalesce: batcher closed")

// Func runs one batch: it answers every request qs[i] in rs[i]. It must
// fill every rs entry (a zero entry means success with a zero value).
type Func[Q, R any] func(ctx context.Context, qs []Q, rs []Result[R])

// Result is one request's answer.
type Result[R any] struct {
	Val R
	Err error
}

// Options tunes a Batcher.
type Options struct {
	// Workers is how many batches may be in flight at once. While one batch
	// is at the server the next one fills; more workers than that only split
	// the queue into smaller batches. Must be >= 1.
	Workers int
	// MaxBatch bounds one batch, so one statement's parameters and one
	// pipeline's replies stay small. Must be >= 1.
	MaxBatch int
	// Gather has a worker that took a batch's first call yield the
	// processor once (runtime.Gosched) before it takes the rest, so the
	// callers already runnable, woken together by the answer of another
	// Lane's batch (a settle's begin answering callers who go on to their
	// record), reach the queue first and join this batch instead of the
	// next. Without it the first of them takes a worker that is idle
	// alone, in a batch of one, and the others wait out that batch's whole
	// round trip for theirs. It is not a timed wait: with nothing else
	// runnable the worker goes on at once.
	Gather bool
	// Context returns the context a batch runs under (for example with a
	// timeout), since a batch serves many callers and cannot use any one
	// caller's context. Nil means context.Background.
	Context func() (context.Context, context.CancelFunc)
	_       struct{}
}

// Batcher coalesces concurrent Do calls. Safe for concurrent use.
//
// It is what makes ref/postgres and ref/redis fast under concurrency: a
// worker finds the calls queued behind the one it waited for, and a
// multi-row statement or a pipeline costs the server little more than a
// single one. At concurrency 1 a batch holds one request and the cost is
// one channel hand-off on top of the round trip (BenchmarkDo measures it).
type Batcher[Q, R any] struct {
	fn   Func[Q, R]
	opts Options
	ch   chan *call[Q, R]
	done chan struct{}
	mu   sync.RWMutex // Do holds it shared while sending; Close exclusively
	wg   sync.WaitGroup
	once sync.Once
	// calls recycles answered calls; see newCall.
	calls sync.Pool
}

type call[Q, R any] struct {
	q   Q
	res chan Result[R]
}

// New starts a Batcher's workers. It panics on invalid options (a
// programming error, not a runtime condition).
func New[Q, R any](fn Func[Q, R], opts Options) *Batcher[Q, R] {
	if fn == nil || opts.Workers < 1 || opts.MaxBatch < 1 {
		panic(fmt.Sprintf("coalesce.New: need a func, Workers >= 1 and MaxBatch >= 1, got fn=%v Workers=%d MaxBatch=%d",
			fn != nil, opts.Workers, opts.MaxBatch))
	}
	b := &Batcher[Q, R]{
		fn:   fn,
		opts: opts,
		// A queue as deep as every worker's next batch: a burst larger
		// than that waits in Do (back-pressure), not in an unbounded queue.
		ch:   make(chan *call[Q, R], opts.Workers*opts.MaxBatch),
		done: make(chan struct{}),
	}
	b.wg.Add(opts.Workers)
	for range opts.Workers {
		go b.work()
	}
	return b
}

// Do submits q and waits for its answer. A cancelled ctx returns ctx.Err()
// at once; if q was already queued it may still run (its outcome is then
// unknown to the caller, which the store contracts allow).
func (b *Batcher[Q, R]) Do(ctx context.Context, q Q) (R, error) {
	var zero R
	if err := ctx.Err(); err != nil {
		return zero, err
	}
	c := b.newCall(q)
	b.mu.RLock()
	select {
	case <-b.done:
		b.mu.RUnlock()
		return zero, ErrClosed
	default:
	}
	select {
	case b.ch <- c:
	case <-b.done:
		b.mu.RUnlock()
		return zero, ErrClosed
	case <-ctx.Done():
		b.mu.RUnlock()
		return zero, ctx.Err()
	}
	b.mu.RUnlock()
	// Every queued call is answered: by a worker, or by Close's drain.
	select {
	case r := <-c.res:
		b.putCall(c)
		return r.Val, r.Err
	case <-ctx.Done():
		// The answer may still come: c is the worker's until then, so
		// it is not reused.
		return zero, ctx.Err()
	}
}

// newCall takes a call (and its answer channel) from the pool: two
// allocations fewer per Do, which at tens of thousands of calls a second is
// garbage the collector no longer competes with the callers for.
func (b *Batcher[Q, R]) newCall(q Q) *call[Q, R] {
	c, _ := b.calls.Get().(*call[Q, R])
	if c == nil {
		c = &call[Q, R]{res: make(chan Result[R], 1)}
	}
	c.q = q
	return c
}

// putCall returns c to the pool once its answer was received (the channel
// is empty again and no worker holds c).
func (b *Batcher[Q, R]) putCall(c *call[Q, R]) {
	var zero Q
	c.q = zero // do not keep the request's memory alive
	b.calls.Put(c)
}

func (b *Batcher[Q, R]) work() {
	defer b.wg.Done()
	batch := make([]*call[Q, R], 0, b.opts.MaxBatch)
	qs := make([]Q, 0, b.opts.MaxBatch)
	rs := make([]Result[R], b.opts.MaxBatch)
	for {
		var first *call[Q, R]
		select {
		case first = <-b.ch:
		case <-b.done:
			return
		}
		batch = append(batch[:0], first)
		if b.opts.Gather {
			runtime.Gosched()
		}
	fill:
		for len(batch) < b.opts.MaxBatch {
			select {
			case c := <-b.ch:
				batch = append(batch, c)
			default:
				break fill // nothing else queued: do not wait for more
			}
		}
		qs = qs[:0]
		for _, c := range batch {
			qs = append(qs, c.q)
		}
		clear(rs)
		ctx, cancel := context.Background(), context.CancelFunc(func() {})
		if b.opts.Context != nil {
			ctx, cancel = b.opts.Context()
		}
		b.fn(ctx, qs, rs[:len(qs)])
		cancel()
		for i, c := range batch {
			c.res <- rs[i]
			batch[i] = nil
		}
	}
}

// Close stops the workers after their current batch and answers every
// request still queued with ErrClosed. Later Do calls return ErrClosed.
// Close is idempotent.
func (b *Batcher[Q, R]) Close() {
	b.once.Do(func() {
		close(b.done)
		b.mu.Lock() // no Do is between its done check and its send now
		b.mu.Unlock()
		b.wg.Wait()
		for {
			select {
			case c := <-b.ch:
				c.res <- Result[R]{Err: ErrClosed}
			default:
				return
			}
		}
	})
}

// Lane is a Batcher and the count of its callers in flight. A caller alone
// (none other in flight) runs its call itself: a batch would hold it alone
// anyway and add a hand-off to a worker and back (two waits for a core on
// a loaded host), so at concurrency 1 a batched store costs what an
// unbatched one does. A caller who finds others in flight joins the
// Batcher, which they keep busy. Lanes of one Crew share the count.
// Safe for concurrent use.
type Lane[Q, R any] struct {
	b    *Batcher[Q, R]
	busy *atomic.Int64
}

// Crew is the count of callers in flight that several Lanes share, for
// calls that follow each other (a settle's begin, then its record, then
// its delivery): a caller runs alone only when no call of any of them is
// in flight. With a count per Lane, the first caller a batch answers would
// find the next step's Lane empty (the others it was answered with have
// not reached it yet) and spend a round trip on itself, every batch; with
// the Crew's it finds them still in flight in the step they are leaving,
// and joins the batch they form. The zero Crew is ready to use.
type Crew struct{ busy atomic.Int64 }

// NewLane starts a Lane's Batcher (New's options and panics), with a count
// of its own.
func NewLane[Q, R any](fn Func[Q, R], opts Options) *Lane[Q, R] {
	return NewCrewLane(new(Crew), fn, opts)
}

// NewCrewLane starts a Lane's Batcher (New's options and panics), counting
// its callers in c.
func NewCrewLane[Q, R any](c *Crew, fn Func[Q, R], opts Options) *Lane[Q, R] {
	return &Lane[Q, R]{b: New(fn, opts), busy: &c.busy}
}

// Do answers q by alone() when no other Do of the Lane (or of its Crew) is
// in flight, else through the Batcher (Batcher.Do: ErrClosed after Close).
func (l *Lane[Q, R]) Do(ctx context.Context, q Q, alone func() (R, error)) (R, error) {
	n := l.busy.Add(1)
	defer l.busy.Add(-1)
	if n == 1 {
		return alone()
	}
	return l.b.Do(ctx, q)
}

// Close closes the Batcher (Batcher.Close). A caller alone still runs its
// call: the Lane's owner refuses calls after its own Close.
func (l *Lane[Q, R]) Close() { l.b.Close() }
