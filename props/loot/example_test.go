package lootprops_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/onceproof/onceproof/engine"
	lootfaults "github.com/onceproof/onceproof/faults/loot"
	"github.com/onceproof/onceproof/impls/loot/lootref"
	lootprops "github.com/onceproof/onceproof/props/loot"
	"github.com/onceproof/onceproof/ref/loot/memory"
)

// testClock is a store's test clock: the world moves it to its database
// time before every store call (a PostgreSQL store would UPDATE a clock
// table its statements read in place of now()).
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) Set(_ context.Context, t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
	return nil
}

// An allocator built on ref/loot's Service needs no Design of its own:
// lootref.OnStore runs the Service on the store your test opened (here
// the memory store; yours would be your PostgreSQL or MySQL store with its
// test clock), and lootprops.TestDesign judges it under every loot family
// and property, each a subtest (go test -run
// 'TestMyAllocator/family=crash/prop=NoDupGrant'). An allocator of your own
// implements lootfaults.Design (a cluster of nodes over the Env the world
// gives them) and is passed to TestDesign the same way.
func ExampleTestDesign() {
	clock := &testClock{}
	st := &tables{memory.NewStore(clock.Now)}
	design := lootref.OnStore(lootref.Where{DB: "memory"}, st, lootref.Options{
		SetClock: clock.Set,
		// Empty is your TRUNCATE of the store's tables, before the first
		// run and after each (OnStore runs one at a time on one store).
		Empty: func(context.Context) error { st.Store = memory.NewStore(clock.Now); return nil },
	})
	testMyAllocator := func(t *testing.T) {
		lootprops.TestDesign(t, design)
		if err := design.Err(); err != nil { // the store failed to open or empty: no verdict
			t.Fatal(err)
		}
	}
	_ = testMyAllocator // in your _test.go file: func TestMyAllocator(t *testing.T) { ... }

	// The same design in a small matrix: every cell as the in-memory
	// reference row declares it.
	m := lootprops.RunMatrix(lootprops.MatrixOptions{
		Designs:  []lootfaults.Design{design},
		Families: []engine.Family{lootfaults.Families.Clean, lootfaults.Families.DuplicateClaim},
		N:        5,
	})
	fmt.Println(design.Name(), "mismatching cells:", len(m.Mismatches()), "store failures:", design.Err())
	// Output: loot-ref@memory mismatching cells: 0 store failures: <nil>
}

// tables is the store your test opened, emptied in place between runs.
type tables struct{ lootref.Store }
