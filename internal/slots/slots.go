// Package slots keeps the durable state of a design's runs on a real
// server: slots an Open function creates (a table, a schema, a key
// prefix), each serving one run at a time and emptied between runs, or
// used once and dropped; and the failures to open, empty or drop one,
// which are not verdicts and must be reported before any result is
// written. It is the one bookkeeping both subjects' store adapters share
// (impls/refdesign.StoreDesign, impls/loot/lootref.StoreDesign); it knows
// no subject, so it imports nothing of the project.
package slots

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Timeout bounds one open, empty or drop of a slot, and a wait for a free
// one: a server that does not answer fails the run's slot (reported by
// Err) instead of hanging the matrix. 30 s is far past a loopback or
// cross-region round trip and a schema's creation (tens of milliseconds).
const Timeout = 30 * time.Second

// MaxKeptErrs bounds the errors Err reports: a server that went away fails
// every later run with the same error, and the first few say why.
const MaxKeptErrs = 5

// Slot is durable state on a real server that runs use one at a time.
type Slot[T any] struct {
	// State is what a run uses: a store open on the slot.
	State T
	// Empty removes everything a run left, for the next run. Nil: the
	// slot serves one run and is dropped after it.
	Empty func(ctx context.Context) error
	// Drop closes the slot and removes its durable state; nil: nothing to
	// remove.
	Drop func(ctx context.Context) error
}

// Open creates slot number k (0, 1, ... in the order slots are needed, a
// probe's included: the number names the slot's durable state, it does
// not identify a schedule).
type Open[T any] func(ctx context.Context, k int) (*Slot[T], error)

// Pool hands slots to runs. Safe for concurrent use.
type Pool[T any] struct {
	open Open[T]
	sem  chan struct{} // nil: no limit on slots in use

	mu    sync.Mutex
	next  int        // the number of the next slot
	free  []*Slot[T] // emptied, ready for a run
	held  map[*Slot[T]]bool
	runs  int
	live  int
	errs  []error
	nerrs int
}

// New returns a pool of slots open creates, at most max in use at once
// (0: as many as runs in flight; a run past max waits for a free one, up to
// Timeout).
func New[T any](open Open[T], max int) *Pool[T] {
	p := &Pool[T]{open: open, held: map[*Slot[T]]bool{}}
	if max > 0 {
		p.sem = make(chan struct{}, max)
	}
	return p
}

// Acquire counts a run and returns its number and a free slot, or a new
// one. On error the run still counts (Release(nil) ends it); the caller
// reports the error with Fail.
func (p *Pool[T]) Acquire(ctx context.Context) (run int, s *Slot[T], err error) {
	p.mu.Lock()
	run = p.runs
	p.runs++
	p.live++
	p.mu.Unlock()
	s, err = p.take(ctx)
	return run, s, err
}

// take returns a free slot or opens one, within the pool's limit.
func (p *Pool[T]) take(ctx context.Context) (*Slot[T], error) {
	if p.sem != nil {
		ctx, cancel := context.WithTimeout(ctx, Timeout)
		defer cancel()
		select {
		case p.sem <- struct{}{}:
		case <-ctx.Done():
			return nil, fmt.Errorf("no free slot within %v (a run that never ended holds it): %w", Timeout, ctx.Err())
		}
	}
	p.mu.Lock()
	if n := len(p.free); n > 0 {
		s := p.free[n-1]
		p.free = p.free[:n-1]
		p.held[s] = true
		p.mu.Unlock()
		return s, nil
	}
	k := p.next
	p.next++
	p.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	s, err := p.open(ctx, k)
	if err != nil {
		p.unhold()
		return nil, err
	}
	p.mu.Lock()
	p.held[s] = true
	p.mu.Unlock()
	return s, nil
}

// unhold frees a place under the limit.
func (p *Pool[T]) unhold() {
	if p.sem != nil {
		<-p.sem
	}
}

// Release ends a run of Acquire: its slot s (nil if it did not open) is
// emptied and made free, or, used once, dropped. Its error is the slot's
// (the caller reports it with Fail); a slot that cannot be emptied is
// never used again (Done still drops it).
func (p *Pool[T]) Release(s *Slot[T]) error {
	defer func() {
		p.mu.Lock()
		p.live--
		p.mu.Unlock()
	}()
	return p.put(s)
}

// put empties or drops s and makes room for another.
func (p *Pool[T]) put(s *Slot[T]) error {
	if s == nil {
		return nil
	}
	defer p.unhold()
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	if s.Empty == nil {
		p.mu.Lock()
		delete(p.held, s)
		p.mu.Unlock()
		return drop(ctx, s)
	}
	if err := s.Empty(ctx); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.held, s)
	p.free = append(p.free, s)
	return nil
}

// drop runs s's Drop, if any.
func drop[T any](ctx context.Context, s *Slot[T]) error {
	if s.Drop == nil {
		return nil
	}
	return s.Drop(ctx)
}

// Book is the part of a pool its design exports, embedded: what the
// runs did to their slots, and the calls before and after them.
type Book[T any] struct{ p *Pool[T] }

// Book returns p's Book.
func (p *Pool[T]) Book() Book[T] { return Book[T]{p} }

// Probe opens a store under ctx and frees or removes it, before a matrix
// and outside its runs: a server that cannot be used (refused, wrong
// password, no privilege) fails here, at once and with its cause, instead
// of in every run.
func (b Book[T]) Probe(ctx context.Context) error {
	p := b.p
	s, err := p.take(ctx)
	if err != nil {
		return err
	}
	return p.put(s)
}

// Done closes every store still open, free or held by a run that never
// ended (a run the watchdog gave up on), removes its durable state, and
// returns what failed. Call it after the tests or the matrix, interrupted
// or not.
func (b Book[T]) Done() error {
	p := b.p
	p.mu.Lock()
	all := p.free
	for s := range p.held {
		all = append(all, s)
	}
	p.free, p.held = nil, map[*Slot[T]]bool{}
	p.mu.Unlock()
	var errs []error
	for _, s := range all {
		ctx, cancel := context.WithTimeout(context.Background(), Timeout)
		errs = append(errs, drop(ctx, s))
		cancel()
	}
	return errors.Join(errs...)
}

// Runs is how many runs (clusters) the design has built.
func (b Book[T]) Runs() int {
	p := b.p
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.runs
}

// Live is how many runs are open (built and not yet closed): zero after
// a matrix, or a run's store leaked.
func (b Book[T]) Live() int {
	p := b.p
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.live
}

// Fail keeps err, a slot's failure, for Err.
func (p *Pool[T]) Fail(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.nerrs++
	if len(p.errs) < MaxKeptErrs {
		p.errs = append(p.errs, err)
	}
}

// Err returns the failures to open, empty or clean up a store so far
// (the first MaxKeptErrs, and how many more), or nil: they are not
// verdicts, and a run whose store failed has a void one, so check Err
// before trusting any result.
func (b Book[T]) Err() error {
	p := b.p
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.nerrs == 0 {
		return nil
	}
	errs := append([]error(nil), p.errs...)
	if more := p.nerrs - len(p.errs); more > 0 {
		errs = append(errs, fmt.Errorf("... and %d more store failures", more))
	}
	return errors.Join(errs...)
}
