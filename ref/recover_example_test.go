package ref_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/onceproof/onceproof/ref"
)

// downSink is a Sink whose delivery fails while down is set: the node that
// claimed a key dies before its credit lands.
type downSink struct {
	ref.Sink
	down bool
}

func (s *downSink) Deliver(ctx context.Context, key ref.Key, payload []byte) error {
	if s.down {
		return errors.New("node died before the credit")
	}
	return s.Sink.Deliver(ctx, key, payload)
}

// The caller's duties 3 to 5 (Settler): a node claims a settlement and dies
// before its credit lands, so the sender is not acked; once the claim's
// lease ends, Recover on another node completes the grant through the
// idempotent Sink, and the sender's retry is then a duplicate, credited once.
func ExampleSettler_Recover() {
	ctx := context.Background()
	store, credits := ref.NewMemStore(), ref.NewMemSink()
	sink := &downSink{Sink: credits, down: true}
	nodeA := ref.NewSettler(ref.NewWindow(time.Minute, 4), store, ref.WithSink(sink))
	nodeB := ref.NewSettler(ref.NewWindow(time.Minute, 4), store, ref.WithSink(sink))

	key := ref.KeyOf(0x0103, 42 /* player */, 9001 /* match */)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	_, err := nodeA.Apply(ctx, key, []byte("+100 gold"), now)
	fmt.Println("node A acks:", err == nil)

	sink.down = false
	n, err := nodeB.Recover(ctx, now.Add(ref.DefaultLease/2))
	fmt.Println("recovered inside the lease:", n, err)
	n, err = nodeB.Recover(ctx, now.Add(ref.DefaultLease))
	fmt.Println("recovered at the lease's end:", n, err)

	res, err := nodeB.Apply(ctx, key, []byte("+100 gold"), now.Add(ref.DefaultLease+time.Second))
	fmt.Printf("the retry: fresh=%v err=%v\n", res.Fresh, err)
	fmt.Println("credits:", credits.Len())
	// Output:
	// node A acks: false
	// recovered inside the lease: 0 <nil>
	// recovered at the lease's end: 1 <nil>
	// the retry: fresh=false err=<nil>
	// credits: 1
}
