package faults_test

import "github.com/onceproof/onceproof/faults/faultstest"

// The runner's tests use the minimal designs of faultstest.
type (
	keyed    = faultstest.Keyed
	naive    = faultstest.Naive
	flaky    = faultstest.Flaky
	stubborn = faultstest.NeverAcks
)
