package ref_test

import (
	"fmt"
	"testing"

	"github.com/onceproof/onceproof/ref"
	"github.com/onceproof/onceproof/ref/storetest"
)

// TestMemStoreConformance runs the store suite on MemStore. Every Open
// returns the same *MemStore: its "durable data" is the process's memory,
// shared by every handle. It has no Close and no connection to Break, so
// those checks skip.
func TestMemStoreConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Harness {
		s := ref.NewMemStore()
		return storetest.Harness{Open: func(t *testing.T) ref.PendingStore { return s }}
	})
}

// TestMemSinkConformance runs the sink suite on MemSink. Its ledger is the
// effect (there is no separate credit), so "applied" is its presence.
func TestMemSinkConformance(t *testing.T) {
	storetest.RunSink(t, func(t *testing.T) storetest.SinkHarness {
		s := ref.NewMemSink()
		return storetest.SinkHarness{
			Open: func(t *testing.T) ref.Sink { return s },
			Applied: func(t *testing.T, k ref.Key) ([]byte, int) {
				if p, ok := s.Applied(k); ok {
					return p, 1
				}
				return nil, 0
			},
		}
	})
}

// BenchmarkStore measures MemStore's claim+commit, the baseline the durable
// backends are compared with (see storetest.BenchClaimCommit).
func BenchmarkStore(b *testing.B) {
	for _, conc := range []int{1, 16, 64} {
		b.Run(fmt.Sprintf("backend=mem/conc=%d", conc), func(b *testing.B) {
			storetest.BenchClaimCommit(b, ref.NewMemStore(), conc)
		})
	}
}
