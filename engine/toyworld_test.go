package engine_test

import (
	"iter"

	"github.com/onceproof/onceproof/engine"
)

// toyWorld is the toy subject as the engine runs it: the one place the
// toy meets engine.World (every other toy file goes through the engine's
// entry points with it), so a change to World's shape is a change here.
// It sets every func, optional ones included, so the toy tests reach the
// engine's use of each.
var toyWorld = engine.World[toyDesign, toySched, toyDetail]{
	Subject:     "toy",
	Families:    toyFamilies,
	Properties:  toyProperties,
	Reached:     toyReached,
	CheckFamily: toyCheckFamily,
	FamilyDoc:   func(f engine.Family) string { return toyFamilyDocs[f] },
	Describe:    func(p engine.Property) string { return string(p) },
	Runs:        func(_ engine.Family, n int) int { return n },
	Exercises:   func(f engine.Family) []string { return toyExercises[f] },
	Generate:    toyGenerate,
	Exhaustive: func(f engine.Family) (iter.Seq[toySched], string, bool) {
		if f != famSmall {
			return nil, "", false
		}
		return toySmall(), toySmallScope, true
	},
	Frame:        func(s *toySched) *engine.Frame { return &s.Frame },
	Messages:     toyMessages,
	Clone:        toyClone,
	Validate:     toyValidate,
	CheckWorld:   toyCheckWorld,
	Format:       toyFormat,
	Parse:        toyParse,
	Drops:        toyDrops,
	Canonical:    toyCanonical,
	Run:          func(d toyDesign, s toySched, o engine.RunOptions) toyHistory { return toyRun(d, s, o) },
	Judge:        toyJudge,
	Coverage:     toyCoverage,
	GroundTruth:  toyGroundTruth,
	AckName:      toyAckName,
	KindName:     toyKindName,
	EventText:    func(_ toyHistory, e toyEvent) string { return toyEventText(e) },
	Participants: func() string { return toyParticipants },
	MermaidLine:  func(_ toyHistory, e toyEvent) string { return toyMermaidLine(e) },
}
