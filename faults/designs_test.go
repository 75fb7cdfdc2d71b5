package faults_test

import (
	"testing"

	"pgregory.net/rapid"

	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/faults/faultstest"
)

// The runner's tests use the minimal designs of faultstest.
type (
	keyed    = faultstest.Keyed
	naive    = faultstest.Naive
	flaky    = faultstest.Flaky
	stubborn = faultstest.NeverAcks
)

// fataler is what eachSchedule's checks need of a *testing.T or *rapid.T.
type fataler interface {
	Helper()
	Fatalf(format string, args ...any)
}

// eachSchedule runs check on schedules of family f: rapid's draws for an
// ordinary family; three generated ones (seeds 1..3) for a family whose
// schedules are a thousand matches long, where rapid's hundred draws would
// take minutes under the race detector.
func eachSchedule(t *testing.T, f faults.Family, check func(t fataler, s faults.Schedule, seed uint64)) {
	t.Helper()
	if faults.World.Runs(f, 100) < 100 {
		for seed := uint64(1); seed <= 3; seed++ {
			check(t, faults.World.Generate(f, seed), seed)
		}
		return
	}
	rapid.Check(t, func(rt *rapid.T) {
		check(rt, faults.Gen(f).Draw(rt, "schedule"), rapid.Uint64().Draw(rt, "seed"))
	})
}
