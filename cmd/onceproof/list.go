package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/onceproof/onceproof/engine"
)

// listCmd is `list`: every name the other commands accept, per subject,
// each with its description wrapped under it at the terminal's width
// (listWidth), so nobody learns them from an error message.
func listCmd(args []string, designs registries, stdout io.Writer) (int, error) {
	fs := flag.NewFlagSet("list", flag.ContinueOnError)
	pos, err := parse(fs, args, stdout)
	if err != nil {
		return 0, err
	}
	if len(pos) > 0 {
		return 0, badf("list takes no arguments, got %q", pos)
	}
	l := lister{w: stdout, width: listWidth(os.Getenv("COLUMNS"), stdout)}
	list(l, settleSubject(designs.settle), "")
	fmt.Fprintln(stdout)
	list(l, lootSubject(designs.loot), " -subject loot")
	return exitOK, nil
}

// listWidth is the column `list` wraps at: COLUMNS if it is a number (a
// shell sets it to the terminal's width), else the terminal's own width if
// out is one, else proseWidth. Never under 40: a description indented 6
// keeps a few words a line.
func listWidth(columns string, out io.Writer) int {
	n, err := strconv.Atoi(strings.TrimSpace(columns))
	if err != nil || n <= 0 {
		n = proseWidth
		if f, ok := out.(*os.File); ok {
			if w, ok := terminalWidth(f); ok {
				n = w
			}
		}
	}
	return max(n, 40)
}

// lister writes list's lines wrapped at width.
type lister struct {
	w     io.Writer
	width int
}

// heading writes a section's heading, wrapped, its continuation lines
// indented 2.
func (l lister) heading(text string) {
	l.lines(wrapWords(text, l.width, "", "  "))
}

// item writes a name (indented 2) and, if it has one, its description
// wrapped under it (indented 6).
func (l lister) item(name, desc string) {
	l.lines([]string{"  " + name})
	if desc = strings.Join(strings.Fields(desc), " "); desc != "" {
		l.lines(wrapWords(desc, l.width, "      ", "      "))
	}
}

func (l lister) lines(ls []string) {
	for _, s := range ls {
		fmt.Fprintln(l.w, s)
	}
}

// list writes sub's designs, families and properties; flag is how a
// matrix command names the subject.
func list[D engine.Design, S, X any](l lister, sub subject[D, S, X], flag string) {
	l.heading(fmt.Sprintf("%s designs (matrix%s -designs a,b; replay -design d):", sub.name, flag))
	for _, d := range sub.designs {
		l.item(d.Name(), summary(d))
	}
	fmt.Fprintln(l.w)
	l.heading(fmt.Sprintf("%s fault families (matrix%s -families x,y; join with + to combine), and the schedules a cell of each runs by default:", sub.name, flag))
	families(l, sub.world, sub.world.Families)
	if len(sub.world.Joins) > 0 {
		fmt.Fprintln(l.w)
		l.heading(fmt.Sprintf("%s joined families the matrix and TestDesign also run (what each pair makes that neither part does):", sub.name))
		families(l, sub.world, sub.world.Joins)
	}
	if len(sub.world.Sampled) > 0 {
		fmt.Fprintln(l.w)
		l.heading(fmt.Sprintf("%s sampled families, run only when named (matrix%s -families x; props.Families in go test): their runs the Go runtime interleaves, so a run does not replay from its schedule and they are no column:", sub.name, flag))
		families(l, sub.world, sub.world.Sampled)
	}
	fmt.Fprintln(l.w)
	l.heading(fmt.Sprintf("%s properties (judged on every run):", sub.name))
	for _, p := range sub.world.Properties {
		l.item(string(p), sub.world.Describe(p))
	}
}

// families writes each family of fs: its name with the schedules a cell of
// it runs by default, and its doc under it.
func families[D engine.Design, S, X any](l lister, world engine.World[D, S, X], fs []engine.Family) {
	for _, f := range fs {
		runs := fmt.Sprintf("%d schedules", world.Runs(f, engine.DefaultMatrixN))
		if _, _, ok := world.Exhaustive(f); ok {
			runs = "all schedules of its scope"
		}
		l.item(fmt.Sprintf("%s (%s)", f, runs), world.FamilyDoc(f))
	}
}

// summary is the first sentence of a design's declared doc, or "" if it
// has none.
func summary(d engine.Design) string {
	text := strings.Join(strings.Fields(engine.DeclarationOf(d).Doc), " ")
	if i := strings.Index(text, ". "); i >= 0 {
		text = text[:i+1]
	}
	return text
}
