package faults

import (
	"iter"

	"github.com/onceproof/onceproof/engine"
)

// World is the settlement subject as the engine runs it: its families,
// generators, text form, world rules, shrinking passes, runner and
// coverage. It leaves Judge, Describe and the renderings to the kit:
// props.World is this value completed with them, and is the one to run.
var World = engine.World[Design, Schedule, Detail]{
	Subject:     "settle",
	Families:    families,
	Joins:       joins,
	Sampled:     sampled,
	Properties:  properties,
	Reached:     reachedNames,
	CheckFamily: checkFamily,
	FamilyDoc:   familyDoc,
	Runs:        runsOf,
	Exercises:   exercisesOf,
	Generate:    generate,
	Exhaustive:  exhaustive,
	Frame:       frameOf,
	Messages:    messagesOf,
	Clone:       clone,
	Validate:    validate,
	CheckWorld:  checkWorld,
	Format:      format,
	Parse:       parse,
	Drops:       drops,
	Canonical:   canonical,
	Run: func(d Design, s Schedule, o RunOptions) engine.History[Schedule, Detail] {
		return engine.History[Schedule, Detail](Run(d, s, o))
	},
	Coverage: func(h engine.History[Schedule, Detail]) engine.Coverage {
		return coverageOf(History(h))
	},
	AckName:  ackName,
	KindName: kindName,
}

// exhaustive enumerates SmallScope, the one family that is every schedule
// of a scope (defaultScope) rather than a sample.
func exhaustive(f Family) (iter.Seq[Schedule], string, bool) {
	if f != Families.SmallScope {
		return nil, "", false
	}
	return enumerate(defaultScope), defaultScope.String(), true
}
