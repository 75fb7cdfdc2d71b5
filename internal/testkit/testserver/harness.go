package testserver

import (
	"sync"
	"testing"

	"github.com/onceproof/onceproof/ref"
	"github.com/onceproof/onceproof/ref/storetest"
)

// CutHarness is the storetest.Harness of a networked store: open builds a
// handle whose connections dial through the given Cutter, and Break cuts
// that handle's connections, so the next call must fail.
func CutHarness(open func(t *testing.T, c *Cutter) ref.PendingStore) storetest.Harness {
	var (
		mu      sync.Mutex
		cutters = map[ref.PendingStore]*Cutter{}
	)
	return storetest.Harness{
		Open: func(t *testing.T) ref.PendingStore {
			c := &Cutter{}
			s := open(t, c)
			mu.Lock()
			cutters[s] = c
			mu.Unlock()
			return s
		},
		Break: func(t *testing.T, s ref.PendingStore) {
			mu.Lock()
			c := cutters[s]
			mu.Unlock()
			if c == nil {
				t.Fatalf("testserver.CutHarness: Break of a handle Open did not return")
			}
			c.Cut()
		},
	}
}
