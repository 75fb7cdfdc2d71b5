// Package props judges designs: a property per kind of harm (Judge turns a
// faults.History into a Report of Verdicts: Holds, Fails with named
// Anomalies, or Unknown), the shrinker (Shrink), the cell and matrix runner
// (RunCell, RunMatrix), the conformance kit for your own design
// (TestDesign), and renderings of a run (Timeline, Mermaid, SchedFile).
// Every failure it reports is real and replays from its schedule; holding is
// evidence within a budget, not proof. The properties and the Chinese terms
// of the source documents are explained in the repository's DESIGN.md.
package props
