package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/props"
)

// replayCmd is `replay FILE [-design D]` and, with explain, `explain FILE
// [-design D]`.
func replayCmd(args []string, designs []faults.Design, stdout io.Writer, explain bool) (int, error) {
	name := "replay"
	if explain {
		name = "explain"
	}
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	design := fs.String("design", "", "the design to run (default: the one the file's header names)")
	pos, err := parse(fs, args)
	if err != nil {
		return 0, err
	}
	if len(pos) != 1 {
		return 0, badf("%s wants one schedule file, got %d arguments; %s", name, len(pos), usageSuffix)
	}
	file := pos[0]
	text, err := os.ReadFile(file)
	if err != nil {
		return 0, badf("cannot read %s: %v", file, err)
	}
	sf, err := props.ParseSchedFile(string(text))
	if err != nil {
		return 0, badf("%s: %v", file, err)
	}
	dname := *design
	if dname == "" {
		dname = sf.Design
	}
	if dname == "" {
		return 0, badf("%s names no design in a '# design:' header; give -design (valid designs: %s)", file, designNames(designs))
	}
	d, err := findDesign(designs, dname)
	if err != nil {
		return 0, err
	}
	h := faults.Run(d, sf.Schedule, faults.RunOptions{})
	r := props.Judge(h)
	fmt.Fprint(stdout, props.Timeline(h, r))
	if explain {
		fmt.Fprint(stdout, "\n```mermaid\n"+props.Mermaid(h, r)+"```\n")
		return exitOK, nil
	}
	code := exitOK
	for _, v := range r {
		if v.Outcome != props.Holds {
			code = exitFailed
			fmt.Fprintln(stdout, v)
		}
	}
	if code == exitOK {
		fmt.Fprintf(stdout, "%s holds every property on %s\n", d.Name(), file)
	}
	return code, nil
}
