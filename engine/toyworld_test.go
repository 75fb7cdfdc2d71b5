package engine_test

import (
	"iter"

	"github.com/onceproof/onceproof/engine"
)

// toyWorld is the toy subject as the engine runs it: the one place the
// toy meets engine.World (every other toy file goes through the engine's
// entry points with it), so a change to World's shape is a change here.
var toyWorld engine.World[toyDesign, toySched, toyDetail] = toy{}

type toy struct{}

func (toy) Subject() string                             { return "toy" }
func (toy) Families() []engine.Family                   { return toyFamilies }
func (toy) Properties() []engine.Property               { return toyProperties }
func (toy) CheckFamily(f engine.Family) error           { return toyCheckFamily(f) }
func (toy) FamilyDoc(f engine.Family) string            { return toyFamilyDocs[f] }
func (toy) Describe(p engine.Property) string           { return string(p) }
func (toy) Runs(_ engine.Family, n int) int             { return n }
func (toy) Exercises(f engine.Family) []string          { return toyExercises[f] }
func (toy) Reached() []string                           { return toyReached }
func (toy) Generate(f engine.Family, s uint64) toySched { return toyGenerate(f, s) }
func (toy) Exhaustive(f engine.Family) (iter.Seq[toySched], string, bool) {
	if f != famSmall {
		return nil, "", false
	}
	return toySmall(), toySmallScope, true
}
func (toy) Frame(s *toySched) *engine.Frame                             { return &s.Frame }
func (toy) Messages(s toySched) engine.Messages                         { return toyMessages(s) }
func (toy) Clone(s toySched) toySched                                   { return toyClone(s) }
func (toy) Validate(s toySched) error                                   { return toyValidate(s) }
func (toy) CheckWorld(s toySched) error                                 { return toyCheckWorld(s) }
func (toy) Format(s toySched) string                                    { return toyFormat(s) }
func (toy) Parse(text string) (toySched, error)                         { return toyParse(text) }
func (toy) Drops(s toySched) []engine.Drop[toySched]                    { return toyDrops(s) }
func (toy) Canonical(s toySched) (toySched, bool)                       { return toyCanonical(s) }
func (toy) Run(d toyDesign, s toySched, o engine.RunOptions) toyHistory { return toyRun(d, s, o) }
func (toy) Judge(h toyHistory) engine.Report                            { return toyJudge(h) }
func (toy) Coverage(h toyHistory) engine.Coverage                       { return toyCoverage(h) }
func (toy) GroundTruth(h toyHistory) string                             { return toyGroundTruth(h) }
func (toy) AckName(a engine.Ack) string                                 { return toyAckName(a) }
func (toy) KindName(k engine.EventKind) string                          { return toyKindName(k) }
func (toy) EventText(_ toyHistory, e toyEvent) string                   { return toyEventText(e) }
func (toy) Participants() string                                        { return toyParticipants }
func (toy) MermaidLine(_ toyHistory, e toyEvent) string                 { return toyMermaidLine(e) }
