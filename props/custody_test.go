package props

import (
	"sync"
	"testing"
	"time"

	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/faults/faultstest"
)

// readFirst is a correct design whose first Durable call is a read: it
// looks up whether the settlement was delivered, credits it under its
// grant key (the ledger makes a second credit a no-op), then marks it
// delivered. It keeps nothing that Recover would need: before the credit
// it has recorded nothing, after it the money is in the ledger. A sender
// that gives up after a read and a failed credit lost the settlement
// itself, so the design must hold NoLoss there.
type readFirst struct{}

func (readFirst) Name() string { return "test-read-first" }
func (readFirst) NewCluster() faults.Cluster {
	return &readFirstCluster{done: map[string]bool{}}
}

type readFirstCluster struct {
	mu   sync.Mutex
	done map[string]bool
}

func (c *readFirstCluster) NewNode(id int, env faults.Env) faults.Node {
	return readFirstNode{c, env}
}

type readFirstNode struct {
	c   *readFirstCluster
	env faults.Env
}

func (n readFirstNode) Deliver(now time.Time, s faults.Settlement) (faults.Ack, error) {
	k, c := faultstest.GrantOf(s), n.c
	var done bool
	if err := n.env.Durable(faults.Read("seen"), func() error {
		c.mu.Lock()
		defer c.mu.Unlock()
		done = c.done[k]
		return nil
	}); err != nil {
		return faults.Nack, err
	}
	if done {
		return faults.AckDuplicate, nil
	}
	if _, err := n.env.Credit(k, s, s.Room); err != nil {
		return faults.Nack, err
	}
	if err := n.env.Durable("mark", func() error {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.done[k] = true
		return nil
	}); err != nil {
		return faults.Nack, err
	}
	return faults.AckCredited, nil
}

// TestCustodyStartsAtTheFirstCallThatCouldHaveTakenEffect: a design whose
// first call is a read holds every property everywhere. While custody
// started at any call that ran, reads included, it failed NoLoss under
// crash, store-error, timeout-after-success (seeds 1..200) and small-scope:
// the read ran, the credit failed before it ran (or the node crashed
// before it), the design nacked, the giving-up sender stopped, and the
// read was taken for custody.
func TestCustodyStartsAtTheFirstCallThatCouldHaveTakenEffect(t *testing.T) {
	TestDesign(t, faultstest.As("test-read-first", readFirst{}, faults.Declaration{
		Doc: "Reads, credits under a grant key, marks; holds everywhere."}), Dir(t.TempDir()))
}
