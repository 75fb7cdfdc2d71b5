package ref_test

import (
	"context"
	"fmt"
	"time"

	"github.com/onceproof/onceproof/ref"
)

// A settlement delivered three times (a retry inside the window, and a replay
// after it) is credited once.
func Example() {
	sink := ref.NewMemSink()
	settler := ref.NewSettler(ref.NewWindow(2*time.Second, 4), ref.NewMemStore(), ref.WithSink(sink))

	const opFinal = 0x0103
	key := ref.KeyOf(opFinal, 42 /* player */, 9001 /* match */)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

	for _, at := range []time.Duration{0, 100 * time.Millisecond, time.Hour} {
		res, err := settler.Apply(context.Background(), key, []byte("+100 gold"), now.Add(at))
		if err != nil {
			fmt.Println("retry later:", err)
			continue
		}
		fmt.Printf("at %v: fresh=%v caught by %v\n", at, res.Fresh, res.Caught)
	}
	fmt.Println("credits:", sink.Len())
	st := settler.Stats()
	fmt.Printf("granted=%d windowDup=%d storeDup=%d\n", st.Granted, st.WindowDup, st.StoreDup)
	// Output:
	// at 0s: fresh=true caught by none
	// at 100ms: fresh=false caught by window
	// at 1h0m0s: fresh=false caught by store
	// credits: 1
	// granted=1 windowDup=1 storeDup=1
}
