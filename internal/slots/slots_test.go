package slots

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// opener counts what a pool does with its slots.
type opener struct {
	opened, emptied, dropped int
	emptyErr                 error
	reusable                 bool
}

func (o *opener) open(context.Context, int) (*Slot[int], error) {
	o.opened++
	s := &Slot[int]{State: o.opened, Drop: func(context.Context) error { o.dropped++; return nil }}
	if o.reusable {
		s.Empty = func(context.Context) error { o.emptied++; return o.emptyErr }
	}
	return s, nil
}

// A reusable slot serves run after run; a single-use one is dropped after
// its run; Done drops what is left, a slot a run never released included.
func TestPoolReusesEmptiesAndDrops(t *testing.T) {
	o := &opener{reusable: true}
	p := New(o.open, 0)
	ctx := context.Background()
	for range 3 {
		_, s, err := p.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Release(s); err != nil {
			t.Fatal(err)
		}
	}
	if o.opened != 1 || o.emptied != 3 || p.Book().Runs() != 3 || p.Book().Live() != 0 {
		t.Errorf("reusable: %d opened, %d emptied, Runs %d, Live %d; want 1, 3, 3, 0", o.opened, o.emptied, p.Book().Runs(), p.Book().Live())
	}
	if _, _, err := p.Acquire(ctx); err != nil { // never released: a stalled run
		t.Fatal(err)
	}
	if err := p.Book().Done(); err != nil || o.dropped != 1 {
		t.Errorf("Done = %v, %d dropped; want the held slot dropped", err, o.dropped)
	}

	o = &opener{}
	p = New(o.open, 0)
	if err := p.Book().Probe(ctx); err != nil {
		t.Fatal(err)
	}
	_, s, _ := p.Acquire(ctx)
	p.Release(s)
	if o.opened != 2 || o.dropped != 2 || p.Book().Runs() != 1 {
		t.Errorf("single use: %d opened, %d dropped, Runs %d; want 2, 2, 1 (a probe is not a run)", o.opened, o.dropped, p.Book().Runs())
	}
}

// A slot that cannot be emptied is never handed out again: the next run
// gets a fresh one.
func TestPoolRetiresASlotThatDoesNotEmpty(t *testing.T) {
	o := &opener{reusable: true, emptyErr: errors.New("truncate: permission denied")}
	p := New(o.open, 1)
	ctx := context.Background()
	_, s, _ := p.Acquire(ctx)
	if err := p.Release(s); err == nil {
		t.Fatal("Release of a slot whose Empty fails returned nil")
	}
	_, s2, err := p.Acquire(ctx) // must not wait: the retired slot freed its place
	if err != nil || s2 == s {
		t.Errorf("after a failed empty: Acquire = %v (same slot %v), want a fresh slot", err, s2 == s)
	}
}

// Err keeps the first MaxKeptErrs failures and counts the rest.
func TestPoolErrKeepsTheFirstFew(t *testing.T) {
	p := New((&opener{}).open, 0)
	for i := range MaxKeptErrs + 3 {
		p.Fail(errors.New(strings.Repeat("x", i+1)))
	}
	if err := p.Book().Err(); err == nil || !strings.Contains(err.Error(), "and 3 more store failures") {
		t.Errorf("Err = %v, want the first %d and 3 more", err, MaxKeptErrs)
	}
}
