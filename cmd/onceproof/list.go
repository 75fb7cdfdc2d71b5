package main

import (
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/impls"
	"github.com/onceproof/onceproof/props"
)

// listCmd is `list`: every name the other commands accept, with one line
// each, so nobody learns them from an error message.
func listCmd(args []string, designs impls.Registry, stdout io.Writer) (int, error) {
	fs := flag.NewFlagSet("list", flag.ContinueOnError)
	pos, err := parse(fs, args, stdout)
	if err != nil {
		return 0, err
	}
	if len(pos) > 0 {
		return 0, badf("list takes no arguments, got %q", pos)
	}
	w := tabwriter.NewWriter(stdout, 0, 8, 2, ' ', 0)
	fmt.Fprintln(w, "designs (matrix -designs a,b; replay -design d):")
	for _, d := range designs {
		fmt.Fprintf(w, "  %s\t%s\n", d.Name(), summary(d))
	}
	fmt.Fprintln(w, "\nfault families (matrix -families x,y; join with + to combine, e.g. late+crash):")
	for _, f := range faults.Families {
		fmt.Fprintf(w, "  %s\t%s\n", f, faults.FamilyDoc(f))
	}
	fmt.Fprintln(w, "\nproperties (judged on every run):")
	for _, p := range faults.Properties {
		fmt.Fprintf(w, "  %s\t%s\n", p, props.Describe(p))
	}
	return exitOK, w.Flush()
}

// summary is the first sentence of a design's declared doc, or "" if it
// has none.
func summary(d faults.Design) string {
	text := strings.Join(strings.Fields(faults.DeclarationOf(d).Doc), " ")
	if i := strings.Index(text, ". "); i >= 0 {
		text = text[:i+1]
	}
	return text
}
