package props

import (
	"github.com/onceproof/onceproof/engine"
	"github.com/onceproof/onceproof/faults"
)

// DefaultMatrixSeed is the first generator seed of every cell: cell i's
// k-th schedule is faults.World.Generate(family, DefaultMatrixSeed+k), the same
// for every design, so the rows compare designs on the same input.
const DefaultMatrixSeed = engine.DefaultMatrixSeed

// DefaultMatrixN is the schedules per cell by default (RunMatrix, RunCell,
// TestDesign); see engine.DefaultMatrixN.
const DefaultMatrixN = engine.DefaultMatrixN

// The matrix's types, for settlement designs (see package engine).
type (
	MatrixOptions  = engine.MatrixOptions[faults.Design]
	Matrix         = engine.Matrix[faults.Schedule, faults.Detail]
	Row            = engine.Row[faults.Schedule, faults.Detail]
	Cell           = engine.Cell[faults.Schedule, faults.Detail]
	Counterexample = engine.Counterexample[faults.Schedule, faults.Detail]
	Mismatch       = engine.Mismatch
)

// RunMatrix runs every design under every family, N seeded schedules per
// cell, and shrinks each cell's failures to minimal counterexamples. It is
// deterministic: the same options give the same Matrix, byte for byte once
// rendered, whatever Parallel is.
func RunMatrix(opt MatrixOptions) Matrix { return engine.RunMatrix(World, opt) }

// Check judges design d under opt.Families (opt.Designs is ignored), as
// RunMatrix does, its cells run in parallel: each cell's verdicts, minimal
// counterexamples, coverage and whether it agrees with d's declaration.
// TestDesign reports from it.
func Check(d faults.Design, opt MatrixOptions) Row { return engine.Check(World, d, opt) }

// RunCell runs one design under one family as RunMatrix does.
func RunCell(d faults.Design, f faults.Family, opt MatrixOptions) Cell {
	return engine.RunCell(World, d, f, opt)
}
