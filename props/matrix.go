package props

import (
	"github.com/onceproof/onceproof/engine"
	"github.com/onceproof/onceproof/faults"
)

// DefaultMatrixSeed is the first generator seed of every cell: cell i's
// k-th schedule is faults.World.Generate(family, DefaultMatrixSeed+k), the same
// for every design, so the rows compare designs on the same input.
const DefaultMatrixSeed uint64 = 1

// DefaultMatrixN is the schedules per cell by default (RunMatrix, RunCell,
// TestDesign): engine.DefaultMatrixN, whose doc derives it.
const DefaultMatrixN = 200

// Both are the engine's: a change there breaks these array lengths.
var (
	_ [1]struct{} = [1 + DefaultMatrixN - engine.DefaultMatrixN]struct{}{}
	_ [1]struct{} = [1 + DefaultMatrixSeed - engine.DefaultMatrixSeed]struct{}{}
)

// The matrix's types, for settlement designs (see package engine).
type (
	MatrixOptions  = engine.MatrixOptions[faults.Design]
	Matrix         = engine.Matrix[faults.Schedule, faults.Detail]
	Row            = engine.Row[faults.Schedule, faults.Detail]
	Cell           = engine.Cell[faults.Schedule, faults.Detail]
	Counterexample = engine.Counterexample[faults.Schedule, faults.Detail]
)

// RunMatrix runs every design under every family, N seeded schedules per
// cell, and shrinks each cell's failures to minimal counterexamples. It is
// deterministic: the same options give the same Matrix, byte for byte once
// rendered, whatever Parallel is.
func RunMatrix(opt MatrixOptions) Matrix { return engine.RunMatrix(World, opt) }

// runCell runs one design under one family as RunMatrix does.
func runCell(d faults.Design, f faults.Family, opt MatrixOptions) Cell {
	return engine.RunCell(World, d, f, opt)
}
