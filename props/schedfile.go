package props

import (
	"fmt"
	"slices"
	"strings"

	"github.com/onceproof/onceproof/faults"
)

// SchedFile is a saved counterexample: a schedule in faults' text form behind
// a header of comments naming the design it was found on and the properties
// it fails there. The header is made of '#' comments, so the file is also a
// plain schedule that faults.Parse reads.
type SchedFile struct {
	Design   string            // the design the schedule was found on ("" if not recorded)
	Fails    []faults.Property // the properties it failed there, in report order
	Schedule faults.Schedule
}

const (
	schedDesign = "# design: "
	schedFails  = "# fails: "
)

// FormatSchedFile renders f: the header lines, then faults.Format(f.Schedule).
func FormatSchedFile(f SchedFile) string {
	var b strings.Builder
	if f.Design != "" {
		b.WriteString(schedDesign + f.Design + "\n")
	}
	if len(f.Fails) > 0 {
		b.WriteString(schedFails + joinProps(f.Fails) + "\n")
	}
	b.WriteString(faults.Format(f.Schedule))
	return b.String()
}

// ParseSchedFile reads what FormatSchedFile wrote, or any schedule text
// (then Design and Fails are empty). A header naming an unknown property is
// an error: the file would otherwise replay against the wrong expectation.
func ParseSchedFile(text string) (SchedFile, error) {
	var f SchedFile
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimRight(line, "\r")
		switch {
		case strings.HasPrefix(line, schedDesign):
			f.Design = strings.TrimSpace(strings.TrimPrefix(line, schedDesign))
		case strings.HasPrefix(line, schedFails):
			for _, name := range strings.Split(strings.TrimPrefix(line, schedFails), ",") {
				p := faults.Property(strings.TrimSpace(name))
				if !slices.Contains(faults.Properties, p) {
					return SchedFile{}, fmt.Errorf("header %q: unknown property %q (want one of %s)", line, p, joinProps(faults.Properties))
				}
				f.Fails = append(f.Fails, p)
			}
		}
	}
	s, err := faults.Parse(text)
	if err != nil {
		return SchedFile{}, err
	}
	f.Schedule = s
	return f, nil
}

func joinProps(ps []faults.Property) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = string(p)
	}
	return strings.Join(s, ", ")
}
