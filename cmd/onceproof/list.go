package main

import (
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/onceproof/onceproof/engine"
)

// listCmd is `list`: every name the other commands accept, per subject,
// with one line each, so nobody learns them from an error message.
func listCmd(args []string, designs registries, stdout io.Writer) (int, error) {
	fs := flag.NewFlagSet("list", flag.ContinueOnError)
	pos, err := parse(fs, args, stdout)
	if err != nil {
		return 0, err
	}
	if len(pos) > 0 {
		return 0, badf("list takes no arguments, got %q", pos)
	}
	w := tabwriter.NewWriter(stdout, 0, 8, 2, ' ', 0)
	list(w, settleSubject(designs.settle), "")
	fmt.Fprintln(w)
	list(w, lootSubject(designs.loot), " -subject loot")
	return exitOK, w.Flush()
}

// list writes sub's designs, families and properties; flag is how a
// matrix command names the subject.
func list[D engine.Design, S, X any](w io.Writer, sub subject[D, S, X], flag string) {
	fmt.Fprintf(w, "%s designs (matrix%s -designs a,b; replay -design d):\n", sub.name, flag)
	for _, d := range sub.designs {
		fmt.Fprintf(w, "  %s\t%s\n", d.Name(), summary(d))
	}
	fmt.Fprintf(w, "\n%s fault families (matrix%s -families x,y; join with + to combine), and the schedules a cell of each runs by default:\n", sub.name, flag)
	families(w, sub.world, sub.world.Families)
	if len(sub.world.Joins) > 0 {
		fmt.Fprintf(w, "\n%s joined families the matrix and TestDesign also run (what each pair makes that neither part does):\n", sub.name)
		families(w, sub.world, sub.world.Joins)
	}
	if len(sub.world.Sampled) > 0 {
		fmt.Fprintf(w, "\n%s sampled families, run only when named (matrix%s -families x; props.Families in go test): their runs the Go runtime interleaves, so a run does not replay from its schedule and they are no column:\n", sub.name, flag)
		families(w, sub.world, sub.world.Sampled)
	}
	fmt.Fprintf(w, "\n%s properties (judged on every run):\n", sub.name)
	for _, p := range sub.world.Properties {
		fmt.Fprintf(w, "  %s\t%s\n", p, sub.world.Describe(p))
	}
}

// families writes a line per family of fs: its name, the schedules a
// cell of it runs by default, and its doc.
func families[D engine.Design, S, X any](w io.Writer, world engine.World[D, S, X], fs []engine.Family) {
	for _, f := range fs {
		runs := fmt.Sprint(world.Runs(f, engine.DefaultMatrixN))
		if _, _, ok := world.Exhaustive(f); ok {
			runs = "all"
		}
		fmt.Fprintf(w, "  %s\t%s\t%s\n", f, runs, world.FamilyDoc(f))
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
