package engine

import (
	"fmt"
	"iter"
	"slices"
)

// Design is what the engine needs of every world's design: its row name.
// Each world has its own Design interface (what a node is given and
// answers); a design may also be a Declarer.
type Design interface {
	Name() string
}

// World is a subject the engine proves designs of: designs of type D, on
// schedules of type S (a Frame beside the world's ground truth), whose
// events carry world details of type X.
//
// A World is a value, not an interface, for the reason porcupine's Model
// is one: a world supplies about 25 pieces, most of them one-liners a
// world would otherwise export only to forward to, and a struct lets it
// fill them from unexported funcs (so its package exports what a design
// author names and nothing else), leave the optional ones nil for the
// documented default, and lets a kit package complete a world's value
// with its properties' Judge and Describe by copying it.
//
// Fields marked required must be set; every other nil func is read as the
// default its doc gives.
type World[D Design, S, X any] struct {
	// Subject names the world in commands and files: "settle", "loot".
	// Required.
	Subject string
	// Families lists every family in column order, Properties every
	// property in report order. Required.
	Families   []Family
	Properties []Property
	// Joins are the joined families (Join) the world documents: joins of
	// two or more families whose schedules make a case no part makes
	// alone (FamilyDoc says which; a world adds one with its reason).
	// TestDesign and the matrix run them by default, as columns after
	// Families (Columns); a design's verdict in one follows from its
	// parts' (Declaration.Expected) unless it declares the join itself.
	// nil: none.
	Joins []Family
	// Sampled are families whose runs the Go runtime interleaves
	// (RunOptions.InNode), so a run does not replay its history from its
	// schedule: they are run only when named, never among Columns (the
	// matrix's committed cells regenerate byte for byte), and TestDesign
	// replays their counterexamples SampledReplays times, saying how many
	// reproduced. nil: none.
	Sampled []Family
	// Reached lists the coverage names in the order reports show them.
	Reached []string

	// CheckFamily reports whether f (or a Join of families) can be
	// generated; its error lists the valid names. Required.
	CheckFamily func(f Family) error
	// FamilyDoc is f's one-line meaning; Describe is p's (nil: "").
	FamilyDoc func(f Family) string
	Describe  func(p Property) string
	// Runs is how many schedules of f a cell of n schedules runs (nil: n).
	Runs func(f Family, n int) int
	// Exercises is what a plain family exists to make happen (names of
	// Reached): a cell that reached none of it did not test its column
	// (nil: nothing).
	Exercises func(f Family) []string

	// Generate returns the schedule of family f that seed selects.
	// Required.
	Generate func(f Family, seed uint64) S
	// Exhaustive, for a family that is an enumeration rather than a
	// sample (settlement's small-scope), yields every schedule of it and
	// says what scope that is (nil: no family is).
	Exhaustive func(f Family) (all iter.Seq[S], scope string, ok bool)
	// Frame is s's Frame, to read and change. Required.
	Frame func(s *S) *Frame
	// Messages is what the engine's texts and Run need of s's messages.
	// Required.
	Messages func(s S) Messages
	// Clone copies s deeply (the Frame's slices and the world's).
	// Required.
	Clone func(s S) S
	// Validate reports whether s is well-formed (ValidateFrame and the
	// world's own shape). Required.
	Validate func(s S) error
	// CheckWorld reports whether s is a world that can happen (its world
	// rules; nil: every valid schedule can).
	CheckWorld func(s S) error
	// Format and Parse are the text form (FormatFrame, ParseFrame);
	// Parse(Format(s)) equals s. Required.
	Format func(s S) string
	Parse  func(text string) (S, error)
	// Drops are the shrinker's first passes: ground truth it may remove
	// (settlements; sessions, requests), each with its deliveries and the
	// world made whole again (nil: none). Canonical renames what is left
	// to small values (false: nothing changed; nil: never changes).
	Drops     func(s S) []Drop[S]
	Canonical func(s S) (S, bool)

	// Run plays s against a fresh cluster of d: the world's wrapping of
	// the engine's Run. Required.
	Run func(d D, s S, o RunOptions) History[S, X]
	// Judge judges every property of Properties on h, in that order.
	// Required (a world's kit package sets it).
	Judge func(h History[S, X]) Report
	// Coverage counts what h reached (names of Reached; nil: nothing).
	Coverage func(h History[S, X]) Coverage

	// The renderings (Timeline, Mermaid). GroundTruth lists what the
	// schedule is about, after the timeline's first line: "settlements:\n
	// s0 ...\n" (nil: nothing). AckName names an answer ("credited";
	// "accepted"; nil: "ack3"); KindName a world event kind (>= EvWorld;
	// nil: "kind9"). EventText is the timeline text of a world event (nil:
	// its KindName). Participants are the sequence diagram's participants
	// after the sender and the nodes ("participant D as Durable
	// store\n..."; nil: none); the design's own effects go to D.
	// MermaidLine is a world event's line (nil: a note over its node).
	GroundTruth  func(h History[S, X]) string
	AckName      func(a Ack) string
	KindName     func(k EventKind) string
	EventText    func(h History[S, X], e Event[X]) string
	Participants func() string
	MermaidLine  func(h History[S, X], e Event[X]) string
}

// Columns is what TestDesign and the matrix run by default: Families,
// then Joins.
func (w World[D, S, X]) Columns() []Family {
	return append(slices.Clip(w.Families), w.Joins...)
}

// Drop is a shrinking pass over N items of a schedule: Apply removes items
// [i, j) (false: no candidate).
type Drop[S any] struct {
	N     int
	Apply func(s S, i, j int) (S, bool)
}

// Complete is w with every nil optional func set to its documented
// default. Every exported engine function that takes a World completes it
// first; a world handed to callers that read its funcs directly (a kit's
// World, a command's listing) is completed once where it is built, so
// none of them checks for nil or writes the default again.
func (w World[D, S, X]) Complete() World[D, S, X] {
	if w.FamilyDoc == nil {
		w.FamilyDoc = func(Family) string { return "" }
	}
	if w.Describe == nil {
		w.Describe = func(Property) string { return "" }
	}
	if w.Runs == nil {
		w.Runs = func(_ Family, n int) int { return n }
	}
	if w.Exercises == nil {
		w.Exercises = func(Family) []string { return nil }
	}
	if w.Exhaustive == nil {
		w.Exhaustive = func(Family) (iter.Seq[S], string, bool) { return nil, "", false }
	}
	if w.CheckWorld == nil {
		w.CheckWorld = func(S) error { return nil }
	}
	if w.Drops == nil {
		w.Drops = func(S) []Drop[S] { return nil }
	}
	if w.Canonical == nil {
		w.Canonical = func(s S) (S, bool) { return s, false }
	}
	if w.Coverage == nil {
		w.Coverage = func(History[S, X]) Coverage { return Coverage{} }
	}
	if w.GroundTruth == nil {
		w.GroundTruth = func(History[S, X]) string { return "" }
	}
	if w.AckName == nil {
		w.AckName = func(a Ack) string { return fmt.Sprintf("ack%d", uint8(a)) }
	}
	if w.KindName == nil {
		w.KindName = func(k EventKind) string { return fmt.Sprintf("kind%d", uint8(k)) }
	}
	if w.EventText == nil {
		kind := w.KindName
		w.EventText = func(_ History[S, X], e Event[X]) string { return kind(e.Kind) }
	}
	if w.Participants == nil {
		w.Participants = func() string { return "" }
	}
	if w.MermaidLine == nil {
		text := w.EventText
		w.MermaidLine = func(h History[S, X], e Event[X]) string {
			return fmt.Sprintf("Note over N%d: %s", e.Node, text(h, e))
		}
	}
	return w
}
