package loottest_test

import (
	"os"
	"testing"
	"time"

	"github.com/onceproof/onceproof/internal/subtest"
	"github.com/onceproof/onceproof/ref/loot"
	"github.com/onceproof/onceproof/ref/loot/loottest"
	"github.com/onceproof/onceproof/ref/loot/memory"
)

// The suite must catch a store (or lock) that breaks any one clause of its
// contract. Each mutant below breaks exactly one; TestSuiteCatchesMutants
// runs the checks that guard that clause in a child process (a failing
// subtest cannot be observed from inside the same test binary run) and
// requires each to fail. The unmutated store and lock pass the whole
// suite, so a failure is the mutation's doing. The store mutants wrap the
// memory store (mutstore_test.go); the lock mutants are a small lock of
// their own (mutlock_test.go).

// mutation names one broken clause.
type mutation string

// storeMutants maps each store mutation to the checks that must catch it.
var storeMutants = []struct {
	m      mutation
	checks []string
}{
	{mutOpenOverwrites, []string{"open/idempotent"}},
	{mutOpenLosesMember, []string{"open/records-spec"}},
	{mutFrozenOmitsPass, []string{"settle/returns-frozen-claims"}},
	{mutCancelRepeatRefused, []string{"cancel/voids-before-grants"}},
	{mutRecordIgnoresCancel, []string{"cancel/voids-before-grants", "cancel/race-with-record-one-wins"}},
	{mutClockLags, []string{"open/deadline-by-store-clock", "claim/deadline-by-store-clock", "settle/due-by-store-clock"}},
	{mutClockLeads, []string{"claim/deadline-by-store-clock", "settle/due-by-store-clock", "grant/lease-backoff-by-store-clock"}},
	{mutStartReopens, []string{"transitions/follow-the-table"}},
	{mutCancelVoidsClosed, []string{"transitions/follow-the-table", "record/all-or-nothing-and-retry"}},
	{mutClaimDeadlineInclusive, []string{"claim/deadline-by-store-clock"}},
	{mutSettleDeadlineExclusive, []string{"settle/due-by-store-clock"}},
	{mutClaimInserts, []string{"claim/one-row-under-20-concurrent"}},
	{mutClaimRetryMovesTime, []string{"claim/retry-keeps-time-change-moves-it"}},
	{mutClaimChangeKeepsTime, []string{"claim/retry-keeps-time-change-moves-it"}},
	{mutClaimNoMembership, []string{"claim/members-only"}},
	{mutClaimNoStatus, []string{"claim/only-while-claiming"}},
	{mutClaimCheckThenWrite, []string{"claim/frozen-at-settle"}},
	{mutCASNotExclusive, []string{"settle/one-winner-under-10-concurrent"}},
	{mutNoTakeover, []string{"settle/takeover-fences-off-old-settler"}},
	{mutFenceIgnored, []string{"settle/takeover-fences-off-old-settler"}},
	{mutRecordPartial, []string{"record/rejects-malformed-decision"}},
	{mutRecordRetryInserts, []string{"record/all-or-nothing-and-retry"}},
	{mutRecordAnswersNoLease, []string{"record/answers-the-closed-row"}},
	{mutLeaseSuccess, []string{"grant/forward-only"}},
	{mutMarkUnknownNil, []string{"grant/forward-only"}},
	{mutLeaseShared, []string{"grant/lease-one-holder-under-10-concurrent", "grant/lease-backoff-by-store-clock"}},
	{mutLeaseNoBackoff, []string{"grant/lease-backoff-by-store-clock"}},
	{mutLeaseNoLimit, []string{"grant/lease-limit-oldest-first"}},
	{mutCancelCheckThenWrite, []string{"cancel/race-with-record-one-wins", "inventory/cancel-races-settle"}},
	{mutOverdueMissesSettling, []string{"overdue/lists-what-needs-a-settler"}},
	{mutDeletesCanceled, []string{"records/nothing-deleted"}},
	{mutDeletesDelivered, []string{"records/nothing-deleted"}},
	{mutDeletesPass, []string{"records/nothing-deleted"}},
	{mutTimesNotUTC, []string{"records/utc-microseconds"}},
	{mutClaimSeconds, []string{"records/utc-microseconds"}},
	{mutSnapshotLossy, []string{"audit/snapshot-round-trips"}},
	{mutIgnoresContext, []string{"context/canceled"}},
	{mutNotShared, []string{"handles/share-data"}},
	{mutInventoryTwice, []string{"inventory/exactly-once-end-to-end"}},
	{mutInventoryBatchTwice, []string{"inventory/batch-redelivery"}},
}

// lockMutants maps each lock mutation to the checks that must catch it.
var lockMutants = []struct {
	m      mutation
	checks []string
}{
	{mutLockCheckThenSet, []string{"acquire/one-holder-under-20-concurrent"}},
	{mutLockNoNX, []string{"acquire/live-key-not-taken-nor-extended", "acquire/ttl-by-lock-clock"}},
	{mutLockRenews, []string{"acquire/live-key-not-taken-nor-extended"}},
	{mutLockNeverExpires, []string{"acquire/ttl-by-lock-clock", "release/after-expiry-spares-new-holder"}},
	{mutLockReleaseAnyToken, []string{"release/compare-and-delete", "release/after-expiry-spares-new-holder"}},
	{mutLockGetThenDel, []string{"release/atomic-under-race"}},
	{mutLockIgnoresContext, []string{"context/canceled"}},
}

const envMutant = "ONCEPROOF_LOOTTEST_MUTANT"

// base is the harness clocks' origin, with sub-microsecond digits.
var base = time.Date(2026, 3, 1, 12, 0, 0, 789, time.UTC)

// TestSuitePassesUnmutatedStore: the mutants' base (the memory store
// behind a wrapper that breaks nothing) passes every check.
func TestSuitePassesUnmutatedStore(t *testing.T) { loottest.Run(t, mutantHarness(mutNone)) }

// TestSuitePassesUnmutatedLock: likewise for the mutant lock.
func TestSuitePassesUnmutatedLock(t *testing.T) { loottest.RunLock(t, mutantLockHarness(mutNone)) }

// TestSuiteCatchesMutants runs each mutant's checks in a child process and
// requires every one of them to fail.
func TestSuiteCatchesMutants(t *testing.T) {
	if os.Getenv(envMutant) != "" {
		t.Skip("child of TestSuiteCatchesMutants: see TestMutantChild")
	}
	run := func(t *testing.T, child string, m mutation, check string) {
		subtest.MustFail(t, envMutant, string(m), child, check, "./ref/loot/loottest")
	}
	for _, mc := range storeMutants {
		for _, c := range mc.checks {
			t.Run("store/"+string(mc.m)+"/"+c, func(t *testing.T) { run(t, "TestMutantChild", mc.m, c) })
		}
	}
	for _, mc := range lockMutants {
		for _, c := range mc.checks {
			t.Run("lock/"+string(mc.m)+"/"+c, func(t *testing.T) { run(t, "TestMutantLockChild", mc.m, c) })
		}
	}
}

// TestMutantChild runs the store suite on the mutant named by the
// environment; it runs only as TestSuiteCatchesMutants' child.
func TestMutantChild(t *testing.T) {
	m := mutation(os.Getenv(envMutant))
	if m == mutNone {
		t.Skip("runs only as the child of TestSuiteCatchesMutants")
	}
	loottest.Run(t, mutantHarness(m))
}

// TestMutantLockChild runs the lock suite on the mutant named by the
// environment; it runs only as TestSuiteCatchesMutants' child.
func TestMutantLockChild(t *testing.T) {
	m := mutation(os.Getenv(envMutant))
	if m == mutNone {
		t.Skip("runs only as the child of TestSuiteCatchesMutants")
	}
	loottest.RunLock(t, mutantLockHarness(m))
}

// mutantHarness builds each subtest's data: a memory store on a clock the
// harness controls, behind the mutant wrapper.
func mutantHarness(m mutation) func(t *testing.T) loottest.Harness {
	return func(t *testing.T) loottest.Harness {
		clock := memory.NewClock(base)
		storeNow := clock.Now
		switch m {
		case mutClockLags:
			storeNow = func() time.Time { return clock.Now().Add(-time.Second) }
		case mutClockLeads:
			storeNow = func() time.Time { return clock.Now().Add(time.Second) }
		}
		d := newMutData()
		shared := &mutStore{Store: memory.NewStore(storeNow), m: m, d: d, clock: clock}
		return loottest.Harness{
			Open: func(*testing.T) loot.Store {
				if m == mutNotShared {
					return &mutStore{Store: memory.NewStore(storeNow), m: m, d: newMutData(), clock: clock}
				}
				return shared
			},
			Now:     func(*testing.T) time.Time { return clock.Now() },
			Advance: func(_ *testing.T, dur time.Duration) { clock.Advance(dur) },
			Inventory: func(_ *testing.T, s loot.Store) loot.Inventory {
				st := s.(*mutStore).Store
				return &mutInventory{Inventory: st.Inventory(), st: st, m: m, d: d}
			},
			Applied: func(_ *testing.T, no string) int {
				switch m {
				case mutInventoryTwice:
					return d.appliedOf(no)
				case mutInventoryBatchTwice:
					return shared.Store.Applied(no) + d.appliedOf(no)
				}
				return shared.Store.Applied(no)
			},
		}
	}
}
