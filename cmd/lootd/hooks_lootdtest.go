//go:build lootdtest

package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/onceproof/onceproof/ref/loot"
)

// The test build's hold points, which make "mid-settle" a place a test can
// stop a process at. LOOTD_TEST_HOLD lists point:prefix pairs, comma
// separated: point is begin (just after a won BeginSettle: the session is
// SETTLING under the settler's lease) or record (just after RecordGrants:
// CLOSED, its grants PENDING and undelivered); prefix selects sessions by
// number. The first settler of a selected session (fence 1; a takeover
// never holds) logs "test hold" with the point and the session, then waits
// until the file LOOTD_TEST_RELEASE exists (forever if it is unset): the
// test kills it there, or stops it and later lets it go on.
func withTestHooks(st loot.Store, log *slog.Logger) loot.Store {
	spec := os.Getenv("LOOTD_TEST_HOLD")
	if spec == "" {
		return st
	}
	h := &holdStore{Store: st, log: log, release: os.Getenv("LOOTD_TEST_RELEASE"), holds: map[string][]string{}}
	for _, pair := range strings.Split(spec, ",") {
		point, prefix, ok := strings.Cut(pair, ":")
		if !ok || (point != "begin" && point != "record") || prefix == "" {
			panic(fmt.Sprintf("LOOTD_TEST_HOLD: %q is not begin:PREFIX or record:PREFIX", pair))
		}
		h.holds[point] = append(h.holds[point], prefix)
	}
	return h
}

type holdStore struct {
	loot.Store
	holds   map[string][]string
	release string
	log     *slog.Logger
}

func (h *holdStore) BeginSettle(ctx context.Context, no string, lease time.Duration) (loot.Frozen, error) {
	fz, err := h.Store.BeginSettle(ctx, no, lease)
	if err == nil && fz.Session.Fence == 1 {
		h.hold(ctx, "begin", no)
	}
	return fz, err
}

func (h *holdStore) RecordGrants(ctx context.Context, d loot.Decision) (loot.Session, error) {
	s, err := h.Store.RecordGrants(ctx, d)
	if err == nil && d.Fence == 1 {
		h.hold(ctx, "record", d.Session)
	}
	return s, err
}

func (h *holdStore) hold(ctx context.Context, point, no string) {
	selected := false
	for _, p := range h.holds[point] {
		selected = selected || strings.HasPrefix(no, p)
	}
	if !selected {
		return
	}
	h.log.Warn("test hold", "point", point, "session", no)
	for {
		if h.release != "" {
			if _, err := os.Stat(h.release); err == nil {
				h.log.Warn("test release", "point", point, "session", no)
				return
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(10 * time.Millisecond):
		}
	}
}
