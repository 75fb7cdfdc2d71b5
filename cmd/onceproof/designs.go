package main

import (
	"github.com/onceproof/onceproof/impls"
)

// registry is every design the matrix runs, in row order.
func registry() impls.Registry { return impls.All() }
