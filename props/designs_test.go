package props

import (
	"flag"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/onceproof/onceproof/faults"
)

func TestMain(m *testing.M) {
	flag.Parse()
	// The .sched files are this package's persistence; rapid's own fail
	// files would only pile up under testdata/rapid.
	if err := flag.Set("rapid.nofailfile", "true"); err != nil {
		panic(err)
	}
	os.Exit(m.Run())
}

// keyed is the smallest correct design: it credits every arrival under a
// grant key made of the settlement's identity (player, match, kind), so the
// ledger applies it once, and answers from what the ledger did. It keeps no
// memory, so crashes cannot hurt it.
type keyed struct{}

func (keyed) Name() string               { return "test-keyed" }
func (keyed) NewCluster() faults.Cluster { return keyedCluster{} }
func (keyed) Doc() string                { return "Credits under a grant key; holds everywhere." }

type keyedCluster struct{}

func (keyedCluster) NewNode(id int, env faults.Env) faults.Node { return keyedNode{env} }

type keyedNode struct{ env faults.Env }

func (n keyedNode) Deliver(now time.Time, s faults.Settlement) (faults.Ack, error) {
	applied, err := n.env.Credit(fmt.Sprintf("%d/%d/%d", s.Player, s.Match, s.Kind), s, s.Room)
	switch {
	case err != nil:
		return faults.Nack, err
	case applied:
		return faults.AckCredited, nil
	}
	return faults.AckDuplicate, nil
}

// memo remembers in memory what it credited and credits unkeyed: a retry
// after a crash, on another node, or after a credit that timed out after
// success is credited again. It declares NoDup under crash only, so that
// TestDesign has something undeclared to find under multi-node.
type memo struct{}

func (memo) Name() string               { return "test-memo" }
func (memo) NewCluster() faults.Cluster { return memoCluster{} }
func (memo) Expected() faults.Expectation {
	return faults.Expectation{faults.Crash: {faults.NoDup}}
}

type memoCluster struct{}

func (memoCluster) NewNode(id int, env faults.Env) faults.Node {
	return &memoNode{env: env, seen: map[int]bool{}}
}

type memoNode struct {
	env  faults.Env
	mu   sync.Mutex
	seen map[int]bool // by Settlement.ID: a test design may cheat, a real one may not
}

func (n *memoNode) Deliver(now time.Time, s faults.Settlement) (faults.Ack, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.seen[s.ID] {
		return faults.AckDuplicate, nil
	}
	if _, err := n.env.Credit("", s, s.Room); err != nil {
		return faults.Nack, err
	}
	n.seen[s.ID] = true
	return faults.AckCredited, nil
}

// neverAcks answers every arrival with a Nack and credits nothing: the
// sender retries until its budget runs out, so every run is Unknown.
type neverAcks struct{}

func (neverAcks) Name() string               { return "test-never-acks" }
func (neverAcks) NewCluster() faults.Cluster { return neverAcksCluster{} }

type neverAcksCluster struct{}

func (neverAcksCluster) NewNode(id int, env faults.Env) faults.Node { return neverAcksNode{} }

type neverAcksNode struct{}

func (neverAcksNode) Deliver(now time.Time, s faults.Settlement) (faults.Ack, error) {
	return faults.Nack, nil
}
