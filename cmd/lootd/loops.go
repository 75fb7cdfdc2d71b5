package main

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/onceproof/onceproof/ref/loot"
)

// startLoops runs, on wg, the two background loops every instance runs
// (loot's caller's duties 4 and 5), each once at once and then every
// period, until stop is done; their calls run under work, which is
// cancelled only when the drain time is up. A settle cut short there
// leaves its session SETTLING under a lease, which the next Recover, here
// or on another instance, takes over once the lease ends.
//
//   - settle: Store.Overdue lists sessions past their deadline (and
//     SETTLING ones whose settler's lease ended) and each is settled, the
//     scheduler at the deadline, up to workers at once (settleWorkers).
//     Instances race for the same sessions; the lock and the CAS let one
//     through.
//   - compensate: Service.Recover on a store view without overdue
//     sessions (server.compensator), so it only delivers the PENDING
//     grants whose lease ended: each grant's lease grows with its attempts
//     (loot.DefaultBackoff), so a failing inventory is retried ever more
//     slowly and never given up. Between them the two loops do all that
//     Recover would, and every settle shows in the settle metrics.
func (s *server) startLoops(wg *sync.WaitGroup, stop, work context.Context, settleEvery, compensateEvery time.Duration, workers int) {
	settle := func(stop, work context.Context) { s.settleDue(stop, work, workers) }
	for _, l := range []struct {
		every time.Duration
		run   func(stop, work context.Context)
	}{{settleEvery, settle}, {compensateEvery, s.compensate}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t := time.NewTicker(l.every)
			defer t.Stop()
			for {
				l.run(stop, work)
				select {
				case <-stop.Done():
					return
				case <-t.C:
				}
			}
		}()
	}
}

// settleWorkers is how many sessions the settle loop settles at once on
// a database pool of dbConns: a quarter of it, at least one. A settle
// holds one connection at a time (its calls are one after another), so
// the settles hold at most a quarter of the pool and claims, reads and
// the compensation pass keep the rest. Why a quarter: settling is
// background work, and what is left (48 of the default 64) is above what
// claims use: ref/loot/mysql's BenchmarkLoot measured claims/s flat from
// 16 to 64 callers (about 2.5k/s on 2 cores), so more claim connections
// than 16 buy nothing, while 16 settle workers drain a full Overdue batch
// (loot.DefaultBatch 64) in 4 rounds. Redo it if -db-conns' default or the
// claim's cost changes. Settles run side by side so that
// one slow call (a lock timeout, a slow inventory) delays its own
// session, not every session behind it.
func settleWorkers(dbConns int) int { return max(1, dbConns/4) }

// settleDue settles the overdue sessions, a batch at a time while batches
// come full and settle something, up to workers at once; once stop is
// done it starts no further settle and returns when those under way end.
func (s *server) settleDue(stop, work context.Context, workers int) {
	for stop.Err() == nil {
		nos, err := s.be.store.Overdue(work, loot.DefaultBatch)
		if err != nil {
			s.log.Warn("settle loop: listing overdue sessions", "err", err)
			return
		}
		var (
			settled atomic.Int64
			wg      sync.WaitGroup
			slots   = make(chan struct{}, workers)
		)
	start:
		for _, no := range nos {
			select {
			case slots <- struct{}{}:
			case <-stop.Done():
				break start
			}
			if stop.Err() != nil { // both were ready: stop wins
				<-slots
				break start
			}
			wg.Go(func() {
				defer func() { <-slots }()
				if st, err := s.settle(work, no, "deadline"); err == nil || st.Session.Status == loot.StatusClosed {
					settled.Add(1)
				}
			})
		}
		wg.Wait()
		if stop.Err() != nil || len(nos) < loot.DefaultBatch || settled.Load() == 0 {
			return
		}
	}
}

// compensate runs one compensation pass.
func (s *server) compensate(_, work context.Context) {
	r, err := s.compensator.Recover(work)
	if r.Delivered > 0 {
		s.log.Info("compensated", "delivered", r.Delivered)
	}
	if err != nil {
		s.m.recovers.WithLabelValues("error").Inc()
		s.log.Warn("compensation left work for the next pass", "err", err)
		return
	}
	s.m.recovers.WithLabelValues("ok").Inc()
}
