// Command onceproof runs the design matrix and replays counterexamples.
//
//	onceproof matrix [-designs a,b] [-families x,y] [-n N] [-seed S] [-parallel P] [-out DIR] [-store STORE]
//	onceproof replay FILE [-design D]
//	onceproof explain FILE [-design D]
//
// matrix runs every registered design (package impls) under every fault
// family, N generated schedules per cell, shrinks each failing cell to a
// minimal counterexample, and writes DIR/matrix.md and DIR/counterexamples/
// (default DIR: results). It exits 1 when a cell disagrees with what its
// design declares. `make proofs` runs it with the defaults.
//
// matrix -store runs the ref row on a real store instead of its in-memory
// one, a fresh one per run: sqlite:DIR, postgres://... (or postgresql://),
// redis://... (see README, "Your own PostgreSQL or Redis"). It defaults to
// DefaultStoreN schedules per cell and to an -out under the temporary
// directory, never results/.
//
// replay re-runs a schedule file against a design (-design, or the design
// its header names), prints the timeline and the verdicts, and exits 1 when
// a property fails or is unknown (the budget ran out).
//
// explain renders a schedule's run as a timeline and a mermaid sequence
// diagram (markdown that GitHub renders).
//
// Bad input (an unknown design or family, an unreadable or unparsable file,
// a bad flag) prints one line on stderr and exits 2.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/onceproof/onceproof/faults"
)

func main() {
	os.Exit(run(os.Args[1:], registry(), os.Stdout, os.Stderr))
}

// Exit codes.
const (
	exitOK      = 0
	exitFailed  = 1 // a property fails, or the matrix disagrees with a declaration
	exitBadUse  = 2 // bad input: the message says what and lists the valid names
	usageSuffix = "usage: onceproof matrix [-designs a,b] [-families x,y] [-n N] [-seed S] [-parallel P] [-out DIR] [-store sqlite:DIR|postgres://...|redis://...] | replay FILE [-design D] | explain FILE [-design D]"
)

// badInput is an error of the caller's making: exit 2 with its one line.
type badInput struct{ msg string }

func (e badInput) Error() string { return e.msg }

func badf(format string, args ...any) error { return badInput{fmt.Sprintf(format, args...)} }

// run is main without the process: args without the program name, the
// registered designs, and where to write. It returns the exit code.
func run(args []string, designs []faults.Design, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "onceproof: no command; "+usageSuffix)
		return exitBadUse
	}
	var code int
	var err error
	switch args[0] {
	case "matrix":
		code, err = matrixCmd(args[1:], designs, stdout, stderr)
	case "replay":
		code, err = replayCmd(args[1:], designs, stdout, false)
	case "explain":
		code, err = replayCmd(args[1:], designs, stdout, true)
	case "help", "-h", "-help", "--help":
		fmt.Fprintln(stdout, usageSuffix)
		return exitOK
	default:
		err = badf("unknown command %q (want matrix, replay or explain); %s", args[0], usageSuffix)
	}
	var bad badInput
	switch {
	case errors.As(err, &bad):
		fmt.Fprintln(stderr, "onceproof: "+bad.msg)
		return exitBadUse
	case err != nil:
		fmt.Fprintln(stderr, "onceproof: "+err.Error())
		return exitFailed
	}
	return code
}

// parse parses flags that may come before or after the positional
// arguments (`replay FILE -design D` and `replay -design D FILE` both work).
func parse(fs *flag.FlagSet, args []string) ([]string, error) {
	fs.SetOutput(io.Discard)
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, badf("%s: %v; %s", fs.Name(), err, usageSuffix)
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

func designNames(ds []faults.Design) string {
	s := make([]string, len(ds))
	for i, d := range ds {
		s[i] = d.Name()
	}
	return strings.Join(s, ", ")
}

func familyNames() string {
	s := make([]string, len(faults.Families))
	for i, f := range faults.Families {
		s[i] = string(f)
	}
	return strings.Join(s, ", ")
}

func findDesign(ds []faults.Design, name string) (faults.Design, error) {
	for _, d := range ds {
		if d.Name() == name {
			return d, nil
		}
	}
	return nil, badf("unknown design %q (valid designs: %s)", name, designNames(ds))
}
