package engine

import "iter"

// Design is what the engine needs of every world's design: its row name.
// Each world has its own Design interface (what a node is given and
// answers); a design may also be a Declarer.
type Design interface {
	Name() string
}

// World is a subject the engine proves designs of: designs of type D, on
// schedules of type S (a Frame beside the world's ground truth), whose
// events carry world details of type X. The engine runs, judges, shrinks
// and renders through it; everything a world knows and the engine does not
// is here, in four parts.
type World[D Design, S, X any] interface {
	Columns
	ScheduleOps[S]
	// Run plays s against a fresh cluster of d: the world's wrapping of
	// the engine's Run.
	Run(d D, s S, o RunOptions) History[S, X]
	// Judge judges every property of Properties on h, in that order.
	Judge(h History[S, X]) Report
	// Coverage counts what h reached (names of Reached).
	Coverage(h History[S, X]) Coverage
	Render[S, X]
}

// Columns is what a world's matrix has: its families and properties.
type Columns interface {
	// Subject names the world in commands and files: "settle", "loot".
	Subject() string
	// Families lists every family in column order; Properties every
	// property in report order.
	Families() []Family
	Properties() []Property
	// CheckFamily reports whether f (or a Join of families) can be
	// generated; its error lists the valid names.
	CheckFamily(f Family) error
	// FamilyDoc is f's one-line meaning; Describe is p's.
	FamilyDoc(f Family) string
	Describe(p Property) string
	// Runs is how many schedules of f a cell of n schedules runs.
	Runs(f Family, n int) int
	// Exercises is what a plain family exists to make happen (names of
	// Reached): a cell that reached none of it did not test its column.
	Exercises(f Family) []string
	// Reached lists the coverage names in the order reports show them.
	Reached() []string
}

// ScheduleOps is what the engine needs of a world's schedules.
type ScheduleOps[S any] interface {
	// Generate returns the schedule of family f that seed selects.
	Generate(f Family, seed uint64) S
	// Exhaustive, for a family that is an enumeration rather than a
	// sample (settlement's small-scope), yields every schedule of it and
	// says what scope that is.
	Exhaustive(f Family) (all iter.Seq[S], scope string, ok bool)
	// Frame is s's Frame, to read and change.
	Frame(s *S) *Frame
	// Messages is what the engine's texts and Run need of s's messages.
	Messages(s S) Messages
	// Clone copies s deeply (the Frame's slices and the world's).
	Clone(s S) S
	// Validate reports whether s is well-formed (ValidateFrame and the
	// world's own shape); CheckWorld whether it is a world that can
	// happen (its world rules).
	Validate(s S) error
	CheckWorld(s S) error
	// Format and Parse are the text form (FormatFrame, ParseFrame);
	// Parse(Format(s)) equals s.
	Format(s S) string
	Parse(text string) (S, error)
	// Drops are the shrinker's first passes: ground truth it may remove
	// (settlements; sessions, requests), each with its deliveries and the
	// world made whole again. Canonical renames what is left to small
	// values (false: nothing changed).
	Drops(s S) []Drop[S]
	Canonical(s S) (S, bool)
}

// Drop is a shrinking pass over N items of a schedule: Apply removes items
// [i, j) (false: no candidate).
type Drop[S any] struct {
	N     int
	Apply func(s S, i, j int) (S, bool)
}

// Render is what the engine's timelines and diagrams ask a world.
type Render[S, X any] interface {
	// GroundTruth lists what the schedule is about, after the timeline's
	// first line: "settlements:\n  s0 ...\n".
	GroundTruth(h History[S, X]) string
	// AckName names an answer ("credited"; "accepted"); KindName a
	// world event kind (>= EvWorld).
	AckName(a Ack) string
	KindName(k EventKind) string
	// EventText is the timeline text of a world event.
	EventText(h History[S, X], e Event[X]) string
	// Participants are the sequence diagram's participants after the
	// sender and the nodes ("participant D as Durable store\n..."); the
	// design's own effects go to D. MermaidLine is a world event's line.
	Participants() string
	MermaidLine(h History[S, X], e Event[X]) string
}
