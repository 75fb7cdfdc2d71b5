//go:build !lootdtest

package main

import (
	"log/slog"

	"github.com/onceproof/onceproof/ref/loot"
)

// withTestHooks returns st as it is: only the test build (-tags lootdtest,
// hooks_lootdtest.go) has hooks.
func withTestHooks(st loot.Store, _ *slog.Logger) loot.Store { return st }
