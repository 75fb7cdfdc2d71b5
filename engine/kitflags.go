package engine

import (
	"flag"
	"fmt"
	"strconv"
	"testing"
)

// The kit's go test flags, as rapid has -rapid.checks and -rapid.seed:
//
//	-onceproof.n=N     schedules per family (default DefaultMatrixN, or
//	                   ShortMatrixN under -short)
//	-onceproof.seed=S  the first generator seed (default DefaultMatrixSeed)
//	-onceproof.shard=i/n  run only shard i of n of the families (Shard:
//	                   family j is shard j mod n's; the others are skipped
//	                   subtests), so n processes (CI jobs, an Indexed Job's
//	                   pods) share one TestDesign, each family once
//
// They are registered here, in the one package both props and lootprops
// build on, so a test binary that imports both has them once. Precedence,
// highest first: the flag, then the caller's Schedules option, then the
// default (scaled by -short). A flag beats the caller's option because it
// is the later and more specific wish (one invocation, typed by the person
// running it), and because the reproduce command a failure prints carries
// the flags: it must replay exactly even from a test that passes its own
// Schedules. -short scales only the default: a caller's Schedules is a
// budget already chosen for that test.
const (
	flagN     = "onceproof.n"
	flagSeed  = "onceproof.seed"
	flagShard = "onceproof.shard"
)

// Why a tenth: the designs the kit's own tests run need 8 to reach what
// every family exists for and show what they declare (loot-ref under
// store-error and timeout-after-success: its 4th run, of the half a loot
// cell runs; the settlement test designs need 3), so 20 keeps a 2.5x
// margin (the ShortMatrixN tests keep it so). The committed designs'
// declarations need more (75 for four-sig-no-room under
// timeout-after-success, 120 for loot-seed-verbatim under clock-skew,
// whose first failing run is the 1799th of the 3000 a deep loot cell runs
// at 200).

// ShortMatrixN is the schedules per family under go test -short when
// neither -onceproof.n nor Schedules says otherwise: enough for every
// family to reach what it exists for, not always to show a rare declared
// failure. The kit says how deep it looked (the budget and where it came
// from, in its log, and in the message of a StrictExpectations failure).
const ShortMatrixN = DefaultMatrixN / 10

// The flags exist only in a test binary: a command that imports the engine
// (onceproof, lootd) keeps its flag set to its own.
func init() {
	if testing.Testing() {
		registerFlags(flag.CommandLine)
	}
}

// registerFlags defines the kit's flags on fs unless they are there: a
// second registration (another copy of this package linked in, as a
// vendored fork would be) must not panic the test binary, and the values
// are then read through whichever registered first (flagValue).
func registerFlags(fs *flag.FlagSet) {
	if fs.Lookup(flagN) == nil {
		fs.Int(flagN, 0, "onceproof kit: schedules per fault family (0: the default, "+strconv.Itoa(DefaultMatrixN)+", or "+strconv.Itoa(ShortMatrixN)+" under -short); beats the test's Schedules option")
	}
	if fs.Lookup(flagShard) == nil {
		fs.String(flagShard, "", "onceproof kit: run only shard i/n of each TestDesign's families (0 <= i < n; the others are skipped)")
	}
	if fs.Lookup(flagSeed) == nil {
		fs.Uint64(flagSeed, 0, "onceproof kit: the first generator seed (0: the default, "+strconv.FormatUint(DefaultMatrixSeed, 10)+"); beats the test's Schedules option")
	}
}

// budget is the schedules per family and the first seed TestDesign runs,
// and where the budget came from (for the log line that says how deep the
// kit looked): the flags over the caller's n and seed (0: not given) over
// the defaults, the default n scaled down by -short.
func budget(n int, seed uint64) (int, uint64, string) {
	from := "Schedules"
	if fn, ok := flagValue(flagN); ok && fn > 0 {
		n, from = int(fn), "-"+flagN
	}
	if fs, ok := flagValue(flagSeed); ok && fs > 0 {
		seed = fs
	}
	if seed == 0 {
		seed = DefaultMatrixSeed
	}
	switch {
	case n > 0:
	case testing.Short():
		n, from = ShortMatrixN, fmt.Sprintf("-short: DefaultMatrixN/%d", DefaultMatrixN/ShortMatrixN)
	default:
		n, from = DefaultMatrixN, "DefaultMatrixN"
	}
	return n, seed, from
}

// flagValue is the value of kit flag name, if it is registered and set to
// a number.
func flagValue(name string) (uint64, bool) {
	f := flag.Lookup(name)
	if f == nil {
		return 0, false
	}
	v, err := strconv.ParseUint(f.Value.String(), 10, 64)
	return v, err == nil
}

// kitShard is -onceproof.shard's Shard (the zero Shard, all families, if
// it is not set).
func kitShard() (Shard, error) {
	f := flag.Lookup(flagShard)
	if f == nil || f.Value.String() == "" {
		return Shard{}, nil
	}
	sh, err := ParseShard(f.Value.String())
	if err != nil {
		return Shard{}, fmt.Errorf("-%s: %w", flagShard, err)
	}
	return sh, nil
}
