package main

import (
	"context"
	"errors"
	"log/slog"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// lockState is the settle lock's health as this instance's calls find it:
// degraded from a failed call (Acquire, Release, the /readyz probe) until
// a call that began after the last failure succeeds. Each change is logged
// once, so an outage is one WARN and its end one INFO however many settles
// it touches, and shown by lootd_lock_degraded and /readyz.
type lockState struct {
	mu       sync.Mutex
	failures uint64 // failed calls so far: a success that began before the last one says nothing of now
	degraded bool
	gauge    prometheus.Gauge
	log      *slog.Logger
}

// begin notes a call's start; pass its result to end.
func (l *lockState) begin() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.failures
}

// end records the outcome of the call that began at began. ctx is the
// call's: an error because the caller gave up (cancelled, not timed out)
// says nothing of the lock service and is not counted.
func (l *lockState) end(ctx context.Context, began uint64, call string, err error) {
	if err != nil && errors.Is(ctx.Err(), context.Canceled) {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case err != nil:
		l.failures++
		if !l.degraded {
			l.degraded = true
			l.gauge.Set(1)
			l.log.Warn("lock degraded: settles go on through the store's CAS alone, each slowed by at most two lock timeouts",
				"call", call, "err", err)
		}
	case l.degraded && began == l.failures:
		l.degraded = false
		l.gauge.Set(0)
		l.log.Info("lock recovered", "call", call)
	}
}

// status is "degraded" or "ok".
func (l *lockState) status() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.degraded {
		return "degraded"
	}
	return "ok"
}
