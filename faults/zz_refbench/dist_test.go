package zz

import (
	"fmt"
	"testing"

	"github.com/onceproof/onceproof/faults"
)

func TestDist(t *testing.T) {
	for _, f := range faults.Families {
		hist := map[int]int{}
		tot, players, matches := 0, 0, 0
		for seed := range uint64(1000) {
			s := faults.Generate(f, seed)
			n := len(s.Deliveries)
			tot += n
			hist[n/10*10]++
			ps := map[uint32]bool{}
			for _, st := range s.Settlements {
				ps[st.Player] = true
			}
			players += len(ps)
			matches += int(s.Settlements[len(s.Settlements)-1].Match)
		}
		fmt.Printf("%-22s mean %.1f players %.2f matches %.2f hist %v\n", f, float64(tot)/1000, float64(players)/1000, float64(matches)/1000, hist)
	}
}
