package faults_test

import (
	"fmt"

	"github.com/onceproof/onceproof/engine"
	"github.com/onceproof/onceproof/faults"
)

// A schedule is text: parse one, run it against a design, read the history.
// The design here (keyed, in designs_test.go) claims, credits by grant key
// and commits; the crash right after its credit is repaired by Recover on
// the rebuilt node (its credit is a no-op in the ledger: same grant), and the
// sender's retry finds the settlement delivered.
func Example() {
	s, err := faults.World.Parse(`
family crash
nodes 1
retry 250ms
max-attempts 8
settle s0 player=1 room=2 match=1 round=1 kind=final net=-30 final=true seq=2
deliver at=1s s0 node=0
fault attempt=0 effect=1 crash-after
`)
	if err != nil {
		fmt.Println(err)
		return
	}
	h := faults.Run(keyed{}, s, faults.RunOptions{})
	for _, e := range h.Events {
		fmt.Printf("%-9s %-7s attempt=%d settlement=%d%s\n", e.At, faults.World.KindName(e.Kind), e.Attempt, e.Msg, detail(e))
	}
	fmt.Println("credits of s0:", h.Credits(0), "exhausted:", h.Exhausted)
	// Output:
	// 1s        arrive  attempt=0 settlement=0
	// 1s        effect  attempt=0 settlement=0 op=claim
	// 1s        credit  attempt=0 settlement=0 applied=true
	// 1s        crash   attempt=0 settlement=0 op=credit crash-after
	// 1s        credit  attempt=-1 settlement=0 applied=false
	// 1s        effect  attempt=-1 settlement=-1 op=commit
	// 1s        recover attempt=-1 settlement=-1 op=recover
	// 1.25s     arrive  attempt=1 settlement=0
	// 1.25s     effect  attempt=1 settlement=0 op=claim
	// 1.25s     ack     attempt=1 settlement=0 duplicate
	// 1h0m1.25s recover attempt=-1 settlement=-1 op=recover
	// credits of s0: 1 exhausted: false
}

func detail(e faults.Event) string {
	switch e.Kind {
	case faults.EvCredit:
		return fmt.Sprintf(" applied=%t", e.Detail.Applied)
	case engine.EvCrash, engine.EvFault:
		return " op=" + e.Op + " " + e.Fault.String()
	case engine.EvAck:
		return " " + faults.World.AckName(e.Ack)
	case engine.EvEffect, engine.EvRecover:
		return " op=" + e.Op
	}
	return ""
}
