package refdesign_test

import (
	"context"
	"fmt"

	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/impls/refdesign"
	"github.com/onceproof/onceproof/props"
	"github.com/onceproof/onceproof/ref"
)

// memTable stands for a store the caller opened (a PostgreSQL table,
// a Redis key prefix): one store, emptied in place between runs.
type memTable struct{ ref.PendingStore }

// ExampleOnStore runs ref on a store of the caller's under the fault
// families, as a user's test would with props.TestDesign(t, d) on their
// own PostgreSQL store and a TRUNCATE for empty.
func ExampleOnStore() {
	st := &memTable{ref.NewMemStore()}
	empty := func(context.Context) error { st.PendingStore = ref.NewMemStore(); return nil }
	d := refdesign.OnStore("memory", st, empty)
	m := props.RunMatrix(props.MatrixOptions{Designs: []faults.Design{d}, Families: []faults.Family{faults.Families.Clean, faults.Families.Crash}, N: 5})
	fmt.Println(d.Name(), "mismatching cells:", len(m.Mismatches()), "store failures:", d.Err())
	// Output: ref@memory mismatching cells: 0 store failures: <nil>
}
