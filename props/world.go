package props

import (
	"iter"

	"github.com/onceproof/onceproof/engine"
	"github.com/onceproof/onceproof/faults"
)

// World is the settlement subject as the engine runs it: faults' families,
// schedules, runner and coverage, with this package's properties and
// renderings. RunMatrix, Check, TestDesign and the command run it.
var World engine.World[faults.Design, faults.Schedule, faults.Detail] = world{}

type world struct{}

func (world) Subject() string                    { return "settle" }
func (world) Families() []engine.Family          { return faults.Families }
func (world) Properties() []engine.Property      { return faults.Properties }
func (world) CheckFamily(f engine.Family) error  { return faults.CheckFamily(f) }
func (world) FamilyDoc(f engine.Family) string   { return faults.FamilyDoc(f) }
func (world) Describe(p engine.Property) string  { return Describe(p) }
func (world) Runs(f engine.Family, n int) int    { return faults.Runs(f, n) }
func (world) Exercises(f engine.Family) []string { return faults.Exercises(f) }
func (world) Reached() []string                  { return faults.Reached }
func (world) Generate(f engine.Family, seed uint64) faults.Schedule {
	return faults.Generate(f, seed)
}

func (world) Exhaustive(f engine.Family) (iter.Seq[faults.Schedule], string, bool) {
	if f != faults.SmallScope {
		return nil, "", false
	}
	return faults.Enumerate(faults.DefaultScope), faults.DefaultScope.String(), true
}

func (world) Frame(s *faults.Schedule) *engine.Frame              { return &s.Frame }
func (world) Messages(s faults.Schedule) engine.Messages          { return faults.MessagesOf(s) }
func (world) Clone(s faults.Schedule) faults.Schedule             { return faults.Clone(s) }
func (world) Validate(s faults.Schedule) error                    { return faults.Validate(s) }
func (world) CheckWorld(s faults.Schedule) error                  { return faults.CheckWorld(s) }
func (world) Format(s faults.Schedule) string                     { return faults.Format(s) }
func (world) Parse(text string) (faults.Schedule, error)          { return faults.Parse(text) }
func (world) Canonical(s faults.Schedule) (faults.Schedule, bool) { return faults.Canonical(s) }
func (world) Drops(s faults.Schedule) []engine.Drop[faults.Schedule] {
	return faults.Drops(s)
}

func (world) Run(d faults.Design, s faults.Schedule, o engine.RunOptions) engine.History[faults.Schedule, faults.Detail] {
	return engine.History[faults.Schedule, faults.Detail](faults.Run(d, s, o))
}

func (world) Judge(h engine.History[faults.Schedule, faults.Detail]) engine.Report {
	return Judge(faults.History(h))
}

func (world) Coverage(h engine.History[faults.Schedule, faults.Detail]) engine.Coverage {
	return faults.CoverageOf(faults.History(h))
}
