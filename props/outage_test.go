package props

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/onceproof/onceproof/faults"
)

// givesUp is tiny with a retry budget: a node that meets a failed store or
// sink call while the calls before it failed too (the cluster counts
// consecutive failures, across nodes and settlements, and a success resets
// the count) gives up once giveUpAfter have failed in a row and acks the
// settlement as credited, although its claim or credit never happened.
type givesUp struct{ tiny }

// giveUpAfter is 5, one more than the most faults storeErrors draws (4):
// without outages a store-error schedule fails at most 4 calls in a row
// (its faults on one settlement's consecutive attempts, as a shrunk
// counterexample of 3 on attempts 0, 1, 2 of a lone settlement showed when
// this was 3), so the design holds; an outage fails 10..30 in a row (the
// outage step), past 5 every time it reaches a call.
const giveUpAfter = 5

func (d givesUp) NewCluster() faults.Cluster {
	return &givesUpCluster{inner: d.tiny.NewCluster()}
}

type givesUpCluster struct {
	inner  faults.Cluster
	mu     sync.Mutex
	failed int // consecutive failed store and sink calls
}

func (c *givesUpCluster) NewNode(id int, env faults.Env) faults.Node {
	return givesUpNode{inner: c.inner.NewNode(id, countingEnv{env, c}), c: c}
}

// countingEnv counts c.failed on every call of the world's env.
type countingEnv struct {
	faults.Env
	c *givesUpCluster
}

func (e countingEnv) note(err error) error {
	e.c.mu.Lock()
	defer e.c.mu.Unlock()
	if err != nil {
		e.c.failed++
	} else {
		e.c.failed = 0
	}
	return err
}

func (e countingEnv) Durable(op string, fn func() error) error {
	return e.note(e.Env.Durable(op, fn))
}

func (e countingEnv) Credit(grant string, s faults.Settlement, room uint32) (bool, error) {
	applied, err := e.Env.Credit(grant, s, room)
	return applied, e.note(err)
}

type givesUpNode struct {
	inner faults.Node
	c     *givesUpCluster
}

func (n givesUpNode) Deliver(now time.Time, s faults.Settlement) (faults.Ack, error) {
	a, err := n.inner.Deliver(now, s)
	if err != nil {
		n.c.mu.Lock()
		gaveUp := n.c.failed >= giveUpAfter
		n.c.mu.Unlock()
		if gaveUp {
			return faults.AckCredited, nil
		}
	}
	return a, err
}

func (n givesUpNode) Recover(now time.Time) error {
	return n.inner.(faults.Recoverer).Recover(now)
}

// TestKitFailsADesignThatGivesUpAfter5StoreFailures: before store-error
// had outages (runs of 10..30 consecutive failed calls of the store or the
// sink, the outage step) this design held every family; now half of
// store-error's schedules fail its store or sink long enough that it acks
// a settlement it never claimed or credited.
func TestKitFailsADesignThatGivesUpAfter5StoreFailures(t *testing.T) {
	const repro = "go test -run '^TestKitFailsADesignThatGivesUpAfter5StoreFailures$' ./props"
	c := judge(t, givesUp{tiny{name: "gives-up-after-5"}}, faults.Families.StoreError)
	if !slices.Contains(c.Failed, faults.Properties.NoLoss) && !slices.Contains(c.Failed, faults.Properties.HonestAck) {
		t.Fatalf("%s under %s: %s, want it to fail no-loss or honest-ack (without store-error's outages it passed; %s)", c.Design, c.Family, c.Text(), repro)
	}
	for _, x := range c.Counterexamples {
		if len(x.Schedule.Outages) == 0 {
			t.Errorf("counterexample %s has no outage: a few scattered faults made the design give up, so this test does not show what outages add (%s):\n%s", x.Name, repro, World.Format(x.Schedule))
		}
	}
}
