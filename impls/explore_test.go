package impls_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/impls"
	"github.com/onceproof/onceproof/props"
)

func TestExplore(t *testing.T) {
	if os.Getenv("EXPLORE") == "" {
		t.Skip()
	}
	n := 200
	for _, d := range impls.All() {
		if only := os.Getenv("EXPLORE_DESIGN"); only != "" && only != d.Name() {
			continue
		}
		for _, f := range faults.Families {
			c := props.RunCell(d, f, props.MatrixOptions{N: n, ShrinkBudget: 1})
			mark := ""
			if fmt.Sprint(c.Failed) != fmt.Sprint(c.Expected) || c.Unknown > 0 {
				mark = "  <<<< MISMATCH"
			}
			fmt.Printf("%-24s %-22s got=%v want=%v unknown=%d%s\n", d.Name(), f, c.Failed, c.Expected, c.Unknown, mark)
		}
	}
}

func TestExploreCE(t *testing.T) {
	name, fam := os.Getenv("CE_DESIGN"), os.Getenv("CE_FAMILY")
	if name == "" {
		t.Skip()
	}
	d, _ := impls.ByName(name)
	c := props.RunCell(d, faults.Family(fam), props.MatrixOptions{N: 100})
	for _, ce := range c.Counterexamples {
		fmt.Println(ce.Name)
		fmt.Println(faults.Format(ce.Schedule))
		fmt.Println(props.Timeline(ce.History, ce.Report))
	}
}
