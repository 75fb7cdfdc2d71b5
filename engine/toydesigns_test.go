package engine_test

import (
	"fmt"
	"slices"
	"time"

	"github.com/onceproof/onceproof/engine"
)

// The toy designs: two that hold and mutants that each break one way the
// engine must catch. A node answers applied or duplicate; an error is a
// nack and the sender retries.

func keyOf(msg int) string { return fmt.Sprintf("k%d", msg) }

func answer(applied bool, err error) (engine.Ack, error) {
	switch {
	case err != nil:
		return engine.Nack, err
	case applied:
		return ackApplied, nil
	}
	return ackDuplicate, nil
}

// keyed applies each increment under its own key: the ledger adds it once
// however often it arrives, and an error is a nack the sender retries.
type keyed struct{}

func (keyed) Name() string                        { return "keyed" }
func (keyed) NewNode(_ int, e toyEnv) engine.Node { return keyedNode{e} }
func (keyed) Declare() engine.Declaration {
	return engine.Declaration{Doc: "applies under the increment's key"}
}
func (n keyedNode) Deliver(_ time.Time, m int) (engine.Ack, error) {
	return answer(n.e.Apply(m, keyOf(m)))
}

type keyedNode struct{ e toyEnv }

// journal notes an increment in its store before applying it and clears
// the note after; Recover applies what a crash left noted, so it holds
// even when the sender gives up.
type journal struct{}

func (journal) Name() string { return "journal" }
func (journal) Declare() engine.Declaration {
	return engine.Declaration{Doc: "notes, applies under the key, clears; Recover applies what is noted"}
}
func (journal) NewNode(_ int, e toyEnv) engine.Node { return journalNode{e} }

type journalNode struct{ e toyEnv }

func (journalNode) KeepsNotes() {}

func (n journalNode) Deliver(_ time.Time, m int) (engine.Ack, error) {
	if err := n.e.Store("note", func(st *toyStore) error { st.set[m] = true; return nil }); err != nil {
		return engine.Nack, err
	}
	applied, err := n.e.Apply(m, keyOf(m))
	if err != nil {
		return engine.Nack, err
	}
	if err := n.e.Store("clear", func(st *toyStore) error { delete(st.set, m); return nil }); err != nil {
		return engine.Nack, err
	}
	return answer(applied, nil)
}

func (n journalNode) Recover(time.Time) error {
	var noted []int
	if err := n.e.Store("scan", func(st *toyStore) error {
		for m := range st.set {
			noted = append(noted, m)
		}
		return nil
	}); err != nil {
		return err
	}
	slices.Sort(noted) // map order must not reach the history
	for _, m := range noted {
		if _, err := n.e.Apply(m, keyOf(m)); err != nil {
			return err
		}
		if err := n.e.Store("clear", func(st *toyStore) error { delete(st.set, m); return nil }); err != nil {
			return err
		}
	}
	return nil
}

// sloppy is journal answering even when its clear failed: the note it
// leaves is the one Tidy looks for. It is no matrix row (only a fault on
// its clear shows it); a schedule file shows it.
type sloppy struct{ journal }

func (sloppy) Name() string                        { return "sloppy" }
func (sloppy) Declare() engine.Declaration         { return engine.Declaration{} }
func (sloppy) NewNode(_ int, e toyEnv) engine.Node { return sloppyNode{journalNode{e}} }

type sloppyNode struct{ journalNode }

func (n sloppyNode) Deliver(_ time.Time, m int) (engine.Ack, error) {
	if err := n.e.Store("note", func(st *toyStore) error { st.set[m] = true; return nil }); err != nil {
		return engine.Nack, err
	}
	applied, err := n.e.Apply(m, keyOf(m))
	if err != nil {
		return engine.Nack, err
	}
	n.e.Store("clear", func(st *toyStore) error { delete(st.set, m); return nil }) //nolint:errcheck // the mutant's bug
	return answer(applied, nil)
}

// unkeyed applies without a key: every arrival adds again.
type unkeyed struct{}

func (unkeyed) Name() string { return "unkeyed" }
func (unkeyed) Declare() engine.Declaration {
	return engine.Declaration{Doc: "applies every arrival without a key", Fails: []engine.Expect{
		{Families: []engine.Family{famDup, famLong}, Props: []engine.Property{noDup},
			Why: "dup sends some increment two or three times and long every one twice; each arrival adds it again"},
		{Families: []engine.Family{famCrash}, Props: []engine.Property{noDup},
			Why: "a crash after the apply (crash-after at effect 0, or any crash at effect 1 or 2, past its one effect: the ack is lost) makes the sender resend, and the resend adds again"},
		{Families: []engine.Family{famError}, Props: []engine.Property{noDup},
			Why: "a timeout after the apply is a nack: the resend adds again"},
		{Families: []engine.Family{famPause}, Props: []engine.Property{noDup},
			Why: "a pause (300ms..1s) outlasts RetryAfter (250ms): the resend on the other node adds, and the stalled call resumes and adds again"},
		{Families: []engine.Family{famConcurrent, famSmall}, Props: []engine.Property{noDup},
			Why: "a copy sent to the other node at the same instant adds again, in every interleaving"},
	}}
}
func (unkeyed) NewNode(_ int, e toyEnv) engine.Node { return unkeyedNode{e} }

type unkeyedNode struct{ e toyEnv }

func (n unkeyedNode) Deliver(_ time.Time, m int) (engine.Ack, error) { return answer(n.e.Apply(m, "")) }

// panicky is keyed, but panics on an increment of 7 (its parser's bug)
// before applying it.
type panicky struct{}

func (panicky) Name() string { return "panicky" }
func (panicky) Declare() engine.Declaration {
	return engine.Declaration{Doc: "keyed, but panics on a +7", Fails: []engine.Expect{
		{Families: []engine.Family{famDup, famCrash, famError, famPause, famConcurrent, famGiveUp, famLong}, Props: []engine.Property{noLoss, responsive},
			Why: "every sampled family draws amounts 1..9, so a cell of 40 schedules of at least one increment misses a +7 with probability at most (8/9)^40 < 1%; the first arrival of a +7 panics (Responsive) and so does every resend, before the apply, so it is never added (NoLoss)"},
	}}
}
func (panicky) NewNode(_ int, e toyEnv) engine.Node { return panickyNode{e} }

type panickyNode struct{ e toyEnv }

func (n panickyNode) Deliver(_ time.Time, m int) (engine.Ack, error) {
	if n.e.Inc(m).Amount == 7 {
		panic(fmt.Sprintf("cannot parse +%d", n.e.Inc(m).Amount))
	}
	return answer(n.e.Apply(m, keyOf(m)))
}

// hangs is keyed, but blocks inside Deliver on an increment of 7 until
// release is closed (a wait for a partner that never comes); it then makes
// an env call, where the abandoned run stops it.
type hangs struct{ release chan struct{} }

func (hangs) Name() string                          { return "hangs" }
func (d hangs) NewNode(_ int, e toyEnv) engine.Node { return hangsNode{e, d.release} }

type hangsNode struct {
	e       toyEnv
	release chan struct{}
}

func (n hangsNode) Deliver(_ time.Time, m int) (engine.Ack, error) {
	if n.e.Inc(m).Amount == 7 {
		<-n.release
	}
	return answer(n.e.Apply(m, keyOf(m)))
}

// racy checks the ledger, then applies without a key: right one at a
// time, wrong when two nodes check before either applies.
type racy struct{}

func (racy) Name() string { return "racy" }
func (racy) Declare() engine.Declaration {
	return engine.Declaration{Doc: "checks the ledger, then applies without a key", Fails: []engine.Expect{
		{Families: []engine.Family{famPause}, Props: []engine.Property{noDup},
			Why: "a pause before the apply (effect 1), after the check said no, outlasts RetryAfter: the resend on the other node checks (still no) and adds, then the stalled call adds too"},
		{Families: []engine.Family{famConcurrent, famSmall}, Props: []engine.Property{noDup},
			Why: "an increment and its same-instant copy on the other node: the interleavings in which both checks run before either apply add it twice (4 of the 6 orders of two checks and two applies)"},
		{Families: []engine.Family{famGiveUp}, Props: []engine.Property{noLoss},
			Why: "the crash before the first attempt's apply (effect 1) comes after the check; the sender gives up and racy has no Recover, so the increment is never added"},
	}}
}
func (racy) NewNode(_ int, e toyEnv) engine.Node { return racyNode{e} }

type racyNode struct{ e toyEnv }

func (n racyNode) Deliver(_ time.Time, m int) (engine.Ack, error) {
	has, err := n.e.Applied(m)
	if err != nil || has {
		return answer(false, err)
	}
	return answer(n.e.Apply(m, ""))
}

// forgetful dedups in a durable window of the last windowSize increments
// it took, then applies without a key: a copy that comes back after
// windowSize others is added again.
type forgetful struct{}

// windowSize is forgetful's window: 2, so its smallest failure needs three
// increments and a copy (i0 i1 i2 i0), more than any one family draws
// next to each other by chance but for long.
const windowSize = 2

func (forgetful) Name() string { return "forgetful" }
func (forgetful) Declare() engine.Declaration {
	return engine.Declaration{Doc: "dedups in a durable window of 2, applies without a key", Fails: []engine.Expect{
		{Families: []engine.Family{famDup, famLong}, Props: []engine.Property{noDup},
			Why: "a copy that comes after two other increments were taken (i0 i1 i2 i0: dup draws up to 4 increments of up to 3 copies, long 10 of 2) has left the window and is added again"},
		{Families: []engine.Family{famCrash}, Props: []engine.Property{noDup, noLoss, honestAck},
			Why: "a crash between the window and the apply leaves the increment taken but not added: every resend answers duplicate (HonestAck) and nothing adds it (NoLoss); a crash after the apply loses the ack, and a resend that comes after two other increments were taken adds it again (NoDup)"},
		{Families: []engine.Family{famError}, Props: []engine.Property{noLoss, honestAck},
			Why: "a failure before the apply, or a timeout after the window took the increment, is a nack: the resend finds it in the window and answers duplicate (HonestAck), and nothing adds it (NoLoss); with one or two increments nothing leaves the window, so nothing is added twice"},
		{Families: []engine.Family{famPause}, Props: []engine.Property{honestAck},
			Why: "a pause before the apply outlasts RetryAfter: the resend on the other node finds the increment in the window and answers duplicate before the stalled call adds it; with one or two increments nothing leaves the window"},
		{Families: []engine.Family{famConcurrent}, Props: []engine.Property{noDup, honestAck},
			Why: "a copy on the other node at the same instant can find the increment in the window before the first node's apply (HonestAck), and a group of up to 8 deliveries can take two others before a copy (NoDup, as for dup)"},
		{Families: []engine.Family{famSmall}, Props: []engine.Property{honestAck},
			Why: "the copy on the other node, scheduled between the window and the apply, answers duplicate first; two increments never leave a window of 2"},
		{Families: []engine.Family{famGiveUp}, Props: []engine.Property{noLoss},
			Why: "the crash before the apply (effect 1) comes after the window took the increment; the sender gives up and there is no Recover"},
	}}
}
func (forgetful) NewNode(_ int, e toyEnv) engine.Node { return forgetfulNode{e} }

type forgetfulNode struct{ e toyEnv }

func (n forgetfulNode) Deliver(_ time.Time, m int) (engine.Ack, error) {
	seen := false
	if err := n.e.Store("window", func(st *toyStore) error {
		if seen = slices.Contains(st.window, m); !seen {
			st.window = append(st.window, m)
			st.window = st.window[max(0, len(st.window)-windowSize):]
		}
		return nil
	}); err != nil {
		return engine.Nack, err
	}
	if seen {
		return ackDuplicate, nil
	}
	return answer(n.e.Apply(m, ""))
}

// careless is keyed, but answers applied whatever the ledger said, errors
// included.
type careless struct{}

func (careless) Name() string { return "careless" }
func (careless) Declare() engine.Declaration {
	return engine.Declaration{Doc: "keyed, but answers applied whatever the ledger said", Fails: []engine.Expect{
		{Families: []engine.Family{famError}, Props: []engine.Property{noLoss, honestAck},
			Why: "a failure injected before the apply is answered applied (HonestAck): the sender stops, and nothing adds the increment (NoLoss); a timeout after the apply did add it"},
	}}
}
func (careless) NewNode(_ int, e toyEnv) engine.Node { return carelessNode{e} }

type carelessNode struct{ e toyEnv }

func (n carelessNode) Deliver(_ time.Time, m int) (engine.Ack, error) {
	n.e.Apply(m, keyOf(m)) //nolint:errcheck // the mutant's bug
	return ackApplied, nil
}

// toyDesigns are the matrix's rows (hangs is not one: a blocked run costs
// its whole stall, and its cell is unknown by construction).
var toyDesigns = []toyDesign{keyed{}, journal{}, unkeyed{}, panicky{}, racy{}, forgetful{}, careless{}}
