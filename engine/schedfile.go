package engine

import (
	"fmt"
	"slices"
	"strings"
)

// SchedFile is a saved counterexample: a schedule in its world's text form
// behind a header of comments naming the design it was found on and the
// properties it fails there. The header is made of '#' comments, so the
// file is also a plain schedule that the world's Parse reads.
type SchedFile[S any] struct {
	Design   string     // the design the schedule was found on ("" if not recorded)
	Fails    []Property // the properties it failed there, in report order
	Schedule S
}

const (
	schedDesign = "# design: "
	schedFails  = "# fails: "
)

// FormatSchedFile renders f: the header lines, then w.Format(f.Schedule).
func FormatSchedFile[D Design, S, X any](w World[D, S, X], f SchedFile[S]) string {
	w = w.Complete()
	var b strings.Builder
	if f.Design != "" {
		b.WriteString(schedDesign + f.Design + "\n")
	}
	if len(f.Fails) > 0 {
		b.WriteString(schedFails + JoinProps(f.Fails) + "\n")
	}
	b.WriteString(w.Format(f.Schedule))
	return b.String()
}

// ParseSchedFile reads what FormatSchedFile wrote, or any schedule text
// (then Design and Fails are empty). A header naming an unknown property is
// an error: the file would otherwise replay against the wrong expectation.
func ParseSchedFile[D Design, S, X any](w World[D, S, X], text string) (SchedFile[S], error) {
	w = w.Complete()
	var f SchedFile[S]
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimRight(line, "\r")
		switch {
		case strings.HasPrefix(line, schedDesign):
			f.Design = strings.TrimSpace(strings.TrimPrefix(line, schedDesign))
		case strings.HasPrefix(line, schedFails):
			for _, name := range strings.Split(strings.TrimPrefix(line, schedFails), ",") {
				p := Property(strings.TrimSpace(name))
				if !slices.Contains(w.Properties, p) {
					return SchedFile[S]{}, fmt.Errorf("header %q: unknown property %q (want one of %s)", line, p, JoinProps(w.Properties))
				}
				f.Fails = append(f.Fails, p)
			}
		}
	}
	s, err := w.Parse(text)
	if err != nil {
		return SchedFile[S]{}, err
	}
	f.Schedule = s
	return f, nil
}
