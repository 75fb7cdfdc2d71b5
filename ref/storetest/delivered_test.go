package storetest_test

import (
	"testing"

	"github.com/onceproof/onceproof/ref"
	"github.com/onceproof/onceproof/ref/storetest"
)

// TestDeliveredClaimerOnMemStore: ref.MemStore, the reference
// DeliveredClaimer, passes RunDeliveredClaimer.
func TestDeliveredClaimerOnMemStore(t *testing.T) {
	storetest.RunDeliveredClaimer(t, func(t *testing.T) storetest.Harness {
		s := ref.NewMemStore()
		return storetest.Harness{Open: func(t *testing.T) ref.PendingStore { return s }}
	})
}
