package main

import (
	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/impls"
)

// registry is every design the matrix runs, in row order.
func registry() []faults.Design { return impls.All() }
