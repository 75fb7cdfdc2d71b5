package main

import (
	"github.com/onceproof/onceproof/impls"
	lootimpls "github.com/onceproof/onceproof/impls/loot"
)

// registry is every design the matrix runs, per subject, in row order.
func registry() registries { return registries{settle: impls.All(), loot: lootimpls.All()} }
