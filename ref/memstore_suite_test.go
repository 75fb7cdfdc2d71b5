package ref_test

import (
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
