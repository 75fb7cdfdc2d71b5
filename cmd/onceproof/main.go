// Command onceproof runs the design matrix and replays counterexamples:
// matrix (designs x fault families of -subject settle, the default, or loot,
// into matrix.md and counterexamples/), replay FILE and explain FILE (a
// schedule file, whose family header names its subject), list, help
// [COMMAND] and version; `onceproof help COMMAND` prints a command's flags.
// `make proofs` runs both subjects' matrix with their defaults, rewriting the
// committed results/ and results/loot/; any other run writes to a fresh
// private directory unless -out names one, and never overwrites or removes a
// file no run of it wrote (matrix's -out help says how).
// Exit codes: 0 ok, 1 a check failed, 2 bad input, 130 interrupted.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"

	"github.com/onceproof/onceproof/internal/redact"
)

func main() {
	tuneGC()
	os.Exit(run(os.Args[1:], registry(), os.Stdout, os.Stderr))
}

// tuneGC sets the collector's target to 400 and its memory limit to 1 GiB,
// unless GOGC or GOMEMLIMIT in the environment set them (the environment
// wins). A matrix allocates a short-lived history per run, hundreds of
// thousands of them, while what it keeps is small.
func tuneGC() {
	if os.Getenv("GOGC") == "" {
		// 400, not Go's 100: at 100 the collector cost a third of make
		// proofs' CPU (measured: 37 s of user time against 26 s at 400, the
		// peak resident set 250 MB against 640 MB).
		debug.SetGCPercent(400)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		// 1 GiB brings the collector back before the resident set
		// reaches it, whatever GOGC=400 would allow.
		debug.SetMemoryLimit(1 << 30)
	}
}

// Exit codes (the package doc and usage list them):
//   - 0: ok.
//   - 1: a property failed (replay: the failure reproduced), a cell
//     disagrees with its design's declaration, or a store broke its
//     contract or could not be used.
//   - 2: bad input, with one line on stderr naming it.
//   - 130: interrupted; every store object the run created was removed.
const (
	exitOK          = 0
	exitFailed      = 1
	exitBadUse      = 2
	exitInterrupted = 130 // 128 + SIGINT, the shell's convention
)

const usage = `onceproof: prove exactly-once designs under injected faults

usage:
  onceproof matrix  [flags]            run designs x fault families; write matrix.md and counterexamples/
                                       (-subject settle, the default, or loot; -shard i/n runs a part)
  onceproof merge   SHARD.json...      the shards' files of one matrix command: write what it writes run whole
  onceproof replay  FILE [-design D]   re-run a schedule file and judge it (exit 1: the failure reproduced)
  onceproof explain FILE [-design D]   render a schedule's run as a timeline and a mermaid diagram
  onceproof service -target player=URL,internal=URL[;...] [flags]
                                       judge a running loot service over HTTP (-replay FILE: rerun a record)
  onceproof list                       the designs, fault families and properties of both subjects, one line each
  onceproof help [COMMAND]             this text, or a command's flags with their defaults
  onceproof version                    one line: version, Go version, the commit it was built from (also -version)

exit codes: 0 ok; 1 a property failed, a cell disagrees with its declaration, or a store is unusable;
2 bad input; 130 interrupted (what the run created was removed)
`

// badInput is an error of the caller's making: exit 2 with its one line.
type badInput struct{ msg string }

func (e badInput) Error() string { return e.msg }

func badf(format string, args ...any) error { return badInput{fmt.Sprintf(format, args...)} }

// exitError ends a command with a code other than 1 and a message.
type exitError struct {
	code int
	msg  string
}

func (e exitError) Error() string { return e.msg }

// run is main without the process: args without the program name, the
// registered designs, and where to write. It returns the exit code.
func run(args []string, designs registries, stdout, stderr io.Writer) int {
	stderr = redact.Writer(stderr, args...) // an address given by a slip (-n URL) is quoted in the error
	if len(args) == 0 {
		fmt.Fprint(stderr, "onceproof: no command (onceproof help lists them)\n")
		return exitBadUse
	}
	var code int
	var err error
	switch cmd := args[0]; cmd {
	case "matrix":
		code, err = matrixCmd(args[1:], designs, stdout, stderr)
	case "merge":
		code, err = mergeCmd(args[1:], designs, stdout, stderr)
	case "replay":
		code, err = replayCmd(args[1:], designs, stdout, false)
	case "explain":
		code, err = replayCmd(args[1:], designs, stdout, true)
	case "list":
		code, err = listCmd(args[1:], designs, stdout)
	case "service":
		code, err = serviceCmd(args[1:], stdout)
	case "help", "-h", "-help", "--help":
		code, err = helpCmd(args[1:], designs, stdout)
	case "version", "-version", "--version":
		code, err = versionCmd(args[1:], stdout)
	default:
		err = badf("unknown command %q (want matrix, merge, replay, explain, service, list, help or version)", cmd)
	}
	var bad badInput
	var exit exitError
	switch {
	case errors.Is(err, errHelp):
		return exitOK
	case errors.As(err, &bad):
		fmt.Fprintln(stderr, "onceproof: "+oneLine(bad.msg))
		return exitBadUse
	case errors.As(err, &exit):
		fmt.Fprintln(stderr, "onceproof: "+exit.msg)
		return exit.code
	case err != nil:
		fmt.Fprintln(stderr, "onceproof: "+err.Error())
		return exitFailed
	}
	return code
}

// oneLine keeps a bad-input message to one line, whatever a library put in
// it.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// errHelp is returned by parse when the command's -h was given: its flags
// were printed on stdout and the command exits 0.
var errHelp = errors.New("help shown")

// parse parses flags that may come before or after the positional
// arguments (`replay FILE -design D` and `replay -design D FILE` both work).
// With -h it prints the command's flags on stdout and returns errHelp.
func parse(fs *flag.FlagSet, args []string, stdout io.Writer) ([]string, error) {
	fs.SetOutput(io.Discard)
	var pos []string
	for {
		err := fs.Parse(args)
		if errors.Is(err, flag.ErrHelp) {
			printFlags(fs, stdout)
			return nil, errHelp
		}
		if err != nil {
			return nil, badf("%s: %v (onceproof help %s lists the flags)", fs.Name(), err, fs.Name())
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// commandUsage is each command's synopsis, for help and -h.
var commandUsage = map[string]string{
	"matrix":  "onceproof matrix [flags]: run designs x fault families, shrink every failure, write matrix.md and counterexamples/",
	"merge":   "onceproof merge [flags] SHARD.json...: the shards of one `matrix -shard i/n -json FILE` command put back together: writes the files that command run whole writes, byte for byte",
	"replay":  "onceproof replay FILE [-design D]: re-run a schedule file; exit 1 when a property fails (the failure reproduced), 0 when all hold",
	"explain": "onceproof explain FILE [-design D]: render a schedule's run as a timeline and a mermaid sequence diagram",
	"list":    "onceproof list: the designs, fault families and properties, one line each",
	"service": "onceproof service -subject loot -target player=URL,internal=URL[;...] [flags]: drive a running loot service with generated workloads, record every request and answer, judge the loot properties; exit 1 when one failed",
	"version": "onceproof version (or -version): the module version, Go version and vcs.revision, vcs.time, vcs.modified it was built with, one line",
}

func printFlags(fs *flag.FlagSet, w io.Writer) {
	fmt.Fprintln(w, commandUsage[fs.Name()])
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	if n == 0 {
		return
	}
	fmt.Fprintln(w, "\nflags:")
	fs.SetOutput(w)
	fs.PrintDefaults()
	fs.SetOutput(io.Discard)
}

// helpCmd is `help [COMMAND]`.
func helpCmd(args []string, designs registries, stdout io.Writer) (int, error) {
	if len(args) == 0 {
		fmt.Fprint(stdout, usage)
		return exitOK, nil
	}
	if len(args) > 1 {
		return 0, badf("help takes at most one command, got %q", args)
	}
	switch args[0] {
	case "matrix":
		_, err := matrixCmd([]string{"-h"}, designs, stdout, io.Discard)
		return exitOK, ignoreHelp(err)
	case "replay", "explain":
		_, err := replayCmd([]string{"-h"}, designs, stdout, args[0] == "explain")
		return exitOK, ignoreHelp(err)
	case "merge":
		_, err := mergeCmd([]string{"-h"}, designs, stdout, io.Discard)
		return exitOK, ignoreHelp(err)
	case "service":
		_, err := serviceCmd([]string{"-h"}, stdout)
		return exitOK, ignoreHelp(err)
	case "list", "version":
		fmt.Fprintln(stdout, commandUsage[args[0]])
		return exitOK, nil
	}
	return 0, badf("unknown command %q (want matrix, merge, replay, explain, service, list or version)", args[0])
}

func ignoreHelp(err error) error {
	if errors.Is(err, errHelp) {
		return nil
	}
	return err
}
