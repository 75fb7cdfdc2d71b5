// Package props judges settlement designs: a property per kind of harm
// (Judge turns a faults.History into a Report of Verdicts: Holds, Fails
// with named anomalies, or Unknown), and World, faults.World completed with
// them and the renderings, behind the matrix (RunMatrix), the conformance
// kit (TestDesign) and the timelines (Timeline). Every failure it reports
// is real and replays; holding is evidence within a budget, not proof. The
// repository's DESIGN.md explains the properties and the Chinese terms.
package props
