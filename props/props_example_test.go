package props_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/props"
)

// memoDesign remembers in memory what it credited: a crash wipes that
// memory, and the sender's retry is credited a second time.
type memoDesign struct{}

func (memoDesign) Name() string               { return "memo" }
func (memoDesign) NewCluster() faults.Cluster { return memoCluster{} }

type memoCluster struct{}

func (memoCluster) NewNode(id int, env faults.Env) faults.Node {
	return &memoNode{env: env, seen: map[[3]uint64]bool{}}
}

type memoNode struct {
	env  faults.Env
	mu   sync.Mutex
	seen map[[3]uint64]bool
}

func (n *memoNode) Deliver(now time.Time, s faults.Settlement) (faults.Ack, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	k := [3]uint64{uint64(s.Player), s.Match, uint64(s.Kind)}
	if n.seen[k] {
		return faults.AckDuplicate, nil
	}
	if _, err := n.env.Credit("", s, s.Room); err != nil {
		return faults.Nack, err
	}
	n.seen[k] = true
	return faults.AckCredited, nil
}

// A test of your own design is one call. Each family and property is a
// subtest (go test -run 'TestMyDesign/family=crash/prop=NoDup'); failures
// are saved under testdata/onceproof/ and replay first on the next run.
func ExampleTestDesign() {
	testMyDesign := func(t *testing.T) {
		props.TestDesign(t, memoDesign{},
			props.Families(faults.Families.Clean, faults.Families.Crash, faults.Families.MultiNode),
			props.StrictExpectations(),
		)
	}
	_ = testMyDesign // in your _test.go file: func TestMyDesign(t *testing.T) { ... }
}

// Judge a single run: the node crashes after its credit reached the ledger
// and before it could ack, the sender retries, and the rebuilt node, whose
// memory is gone, credits again.
func ExampleJudge() {
	s, err := faults.World.Parse(`
family crash
nodes 1
retry 250ms
max-attempts 16
settle s0 player=1 room=1 match=1 round=1 kind=final net=10 final=true seq=1
deliver at=0s s0 node=0
fault attempt=0 effect=0 crash-after
`)
	if err != nil {
		panic(err)
	}
	r := props.Judge(faults.Run(memoDesign{}, s, faults.RunOptions{}))
	for _, v := range r {
		fmt.Println(v.Property, v.Outcome)
	}
	nodup, _ := r.Verdict(faults.Properties.NoDup)
	fmt.Println(nodup.Anomalies[0].Explain)
	// Output:
	// NoDup fails
	// NoLoss holds
	// NoCrossRoom holds
	// NoBlocking holds
	// BoundedState not judged
	// HonestAck holds
	// ExactAmount holds
	// Responsive holds
	// s0 (player 1, room 1, round 1, match 1, final, net 10) was credited 2 times (attempt 0 on node 0 at 0s, unkeyed, attempt 1 on node 0 at 250ms, unkeyed)
}
