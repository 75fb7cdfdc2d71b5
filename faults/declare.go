package faults

import "github.com/onceproof/onceproof/engine"

// Declaration is what a design says about itself, once (engine.Declaration):
// what it is, and the verdict it expects in each family with the
// derivation of that verdict.
type Declaration = engine.Declaration

// Expect declares that under each of Families exactly the properties Props
// fail, for the reason Why.
type Expect = engine.Expect

// Declarer is a Design that declares itself. A design without it is
// expected to hold every property in every family, with no text.
type Declarer interface {
	Design
	Declare() Declaration
}
