package main

import (
	"errors"
	"fmt"
	"sync"
)

// runBook is the bookkeeping of a design on a real store, settlement or
// loot: how many runs (and probes) it started, how many are still open,
// and the failures to open or clean up a run's store, which are not
// verdicts and must be reported before any result is written.
type runBook struct {
	mu    sync.Mutex
	next  int // the number of the next run or probe
	runs  int
	live  int
	errs  []error
	nerrs int
}

// maxKeptErrs bounds the errors Err reports: a server that went away fails
// every later run with the same error, and the first few say why.
const maxKeptErrs = 5

// start counts a run that opens a store and returns its number (0, 1, ...
// in the order the harness builds clusters).
func (b *runBook) start() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.live++
	b.runs++
	b.next++
	return b.next - 1
}

// probe numbers a probe (a store opened and cleaned up before the
// matrix), which is not a run.
func (b *runBook) probe() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.next++
	return b.next - 1
}

// end counts a run's store closed.
func (b *runBook) end() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.live--
}

// Runs is how many clusters (runs) the design has built.
func (b *runBook) Runs() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.runs
}

// Live is how many clusters are open (built and not yet closed): zero
// after a matrix, or a cluster's store leaked.
func (b *runBook) Live() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.live
}

// Err returns the failures to open or clean up a store so far (the first
// few, and how many more), or nil.
func (b *runBook) Err() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.nerrs == 0 {
		return nil
	}
	errs := append([]error(nil), b.errs...)
	if more := b.nerrs - len(b.errs); more > 0 {
		errs = append(errs, fmt.Errorf("... and %d more store failures", more))
	}
	return errors.Join(errs...)
}

func (b *runBook) fail(err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.nerrs++
	if len(b.errs) < maxKeptErrs {
		b.errs = append(b.errs, err)
	}
}
