package props

import (
	"testing"

	"github.com/onceproof/onceproof/engine"
	"github.com/onceproof/onceproof/faults"
)

// Option configures TestDesign (engine.Option: the same options judge a
// loot allocator with lootprops.TestDesign).
type Option = engine.Option

// Families restricts TestDesign to the given fault families (default: all of
// faults.World.Families; a Join of families is accepted too).
func Families(fs ...faults.Family) Option { return engine.Families(fs...) }

// Properties restricts TestDesign to the given properties (default: all of
// faults.World.Properties).
func Properties(ps ...faults.Property) Option { return engine.Properties(ps...) }

// Dir sets where failures are saved and replayed from (default
// "testdata/onceproof", relative to the test's package directory).
func Dir(dir string) Option { return engine.Dir(dir) }

// Schedules sets how many generated schedules each family runs, and the
// first seed: schedule k is faults.World.Generate(family, seed+k), exactly what
// `onceproof matrix -n n -seed seed` runs for a registered design (default
// DefaultMatrixN from DefaultMatrixSeed).
func Schedules(n int, seed uint64) Option { return engine.Schedules(n, seed) }

// StrictExpectations makes a declared failure that the run did not show
// fail the test: use it to guard that a broken design stays caught.
func StrictExpectations() Option { return engine.StrictExpectations() }

// TolerateUnknown lets a property some run could not judge pass, logged
// instead of failed. Use it only with RunOptions that lower MaxEvents on
// purpose, and say why where you do.
func TolerateUnknown() Option { return engine.TolerateUnknown() }

// RunOptions sets the runner's options for every run (default: the zero
// faults.RunOptions). RunOptions(faults.RunOptions{Free: true}) runs the
// concurrent family on free-running goroutines, for the race detector.
func RunOptions(o faults.RunOptions) Option { return engine.RunWith(o) }

// TestDesign judges design d under every fault family, as the matrix does
// (Check), with a subtest per family=<family>/prop=<property>; see
// engine.TestDesign for what it saves, replays and reports. Every failure
// is real and replays; "holds" is no counterexample within the budget.
func TestDesign(t *testing.T, d faults.Design, opts ...Option) {
	t.Helper()
	engine.TestDesign(t, World, d, opts...)
}
