package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/onceproof/onceproof/engine"
	lootfaults "github.com/onceproof/onceproof/faults/loot"
)

// maxSchedFile bounds the schedule file replay reads. A schedule at every
// limit of package engine (MaxMsgs + MaxDeliveries + MaxFaults lines,
// about 98,000, the longest a settle line of about 170 bytes with every
// field at its widest) is under 17 MB; 32 MiB leaves room for comments, and
// a larger file is not a schedule.
const maxSchedFile = 32 << 20

// replayCmd is `replay FILE [-design D]` and, with explain, `explain FILE
// [-design D]`. The file's family header says its subject.
func replayCmd(args []string, designs registries, stdout io.Writer, explain bool) (int, error) {
	name := "replay"
	if explain {
		name = "explain"
	}
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	design := fs.String("design", "", "the design to run (default: the one the file's '# design:' header names; onceproof list names them)")
	pos, err := parse(fs, args, stdout)
	if err != nil {
		return 0, err
	}
	if len(pos) != 1 {
		return 0, badf("%s wants one schedule file, got %d arguments (onceproof help %s)", name, len(pos), name)
	}
	file := pos[0]
	text, err := readSched(file)
	if err != nil {
		return 0, err
	}
	if engine.SubjectOf(text) == lootfaults.World.Subject {
		return replay(lootSubject(designs.loot), file, text, *design, stdout, explain)
	}
	return replay(settleSubject(designs.settle), file, text, *design, stdout, explain)
}

// replay runs the schedule text of file on sub's design (dname, or the
// one its header names) and prints what happened.
func replay[D engine.Design, S, X any](sub subject[D, S, X], file, text, dname string, stdout io.Writer, explain bool) (int, error) {
	w := sub.world
	sf, err := engine.ParseSchedFile(w, text)
	if err != nil {
		return 0, badf("%s: %v", file, err)
	}
	if dname == "" {
		dname = sf.Design
	}
	if dname == "" {
		names := make([]string, len(sub.designs))
		for i, d := range sub.designs {
			names[i] = d.Name()
		}
		return 0, badf("%s names no design in a '# design:' header; give -design (valid %sdesigns: %s)", file, sub.qualifier(), strings.Join(names, ", "))
	}
	d, err := sub.find(dname)
	if err != nil {
		return 0, err
	}
	h := w.Run(d, sf.Schedule, engine.RunOptions{})
	r := w.Judge(h)
	fmt.Fprint(stdout, engine.Timeline(w, h, r))
	if explain {
		fmt.Fprint(stdout, "\n```mermaid\n"+engine.Mermaid(w, h, r)+"```\n")
		return exitOK, nil
	}
	var failed []string
	for _, v := range r {
		if v.Outcome == engine.Fails || v.Outcome == engine.Unknown {
			failed = append(failed, string(v.Property)+" "+v.Outcome.String())
			fmt.Fprintln(stdout, v)
		}
	}
	if len(failed) == 0 {
		fmt.Fprintf(stdout, "%s holds every property on %s (exit 0: nothing reproduced)\n", d.Name(), file)
		return exitOK, nil
	}
	fmt.Fprintf(stdout, "reproduced: %s on %s: %s (exit 1)\n", d.Name(), file, strings.Join(failed, ", "))
	return exitFailed, nil
}

// readSched reads a schedule file of at most maxSchedFile bytes.
func readSched(file string) (string, error) {
	f, err := os.Open(file)
	if err != nil {
		return "", badf("cannot read %s: %v", file, errors.Unwrap(err))
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxSchedFile+1))
	if err != nil {
		return "", badf("cannot read %s: %v", file, err)
	}
	if len(b) > maxSchedFile {
		return "", badf("%s is over %d MiB: not a schedule file", file, maxSchedFile>>20)
	}
	return string(b), nil
}
