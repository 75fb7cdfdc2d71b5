// Package props judges settlement designs: a property per kind of harm
// (Judge turns a faults.History into a Report of Verdicts: Holds, Fails
// with named Anomalies, or Unknown), and World, the settlement subject as
// package engine runs it, behind the shrinker (Shrink), the matrix
// (RunMatrix, RunCell, Check), the conformance kit (TestDesign) and the
// renderings (Timeline, Mermaid, SchedFile). Every failure it reports is
// real and replays; holding is evidence within a budget, not proof. The
// repository's DESIGN.md explains the properties and the Chinese terms.
package props
