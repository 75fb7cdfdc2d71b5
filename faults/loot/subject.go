package lootfaults

import (
	"github.com/onceproof/onceproof/engine"
)

// World is the loot subject as the engine runs it: its families,
// generators, text form, world rules, shrinking passes, runner and
// coverage. It leaves Runs, Judge, Describe and the renderings to the kit:
// lootprops.World is this value completed with them, and is the one to
// run (every func set, so a caller may call any of them).
var World = engine.World[Design, Schedule, Detail]{
	Subject:     subject,
	Families:    families,
	Joins:       joins,
	Properties:  properties,
	Reached:     reachedNames,
	CheckFamily: checkFamily,
	FamilyDoc:   familyDoc,
	Exercises:   exercisesOf,
	Generate:    generate,
	// No Exhaustive: no loot family enumerates a scope, each is a sample
	// (lootprops.World completes it with the default that says so).
	Frame:      func(s *Schedule) *engine.Frame { return &s.Frame },
	Messages:   messagesOf,
	Clone:      clone,
	Validate:   validate,
	CheckWorld: checkWorld,
	Format:     format,
	Parse:      parse,
	Drops:      drops,
	Canonical:  canonical,
	Run: func(d Design, s Schedule, o engine.RunOptions) engine.History[Schedule, Detail] {
		return engine.History[Schedule, Detail](Run(d, s, o))
	},
	Coverage: func(h engine.History[Schedule, Detail]) engine.Coverage {
		return coverageOf(History(h))
	},
	AckName:  answerName,
	KindName: kindName,
}
