package engine

import (
	"errors"
	"fmt"
)

// ValidateFrame reports the first way f is not a well-formed frame for m's
// messages: every header in range, deliveries naming a message and a node
// in range in nondecreasing At order, faults in increasing (Attempt,
// Effect) order with known kinds (a Pause with a duration, only in an
// attempt), no faults in a Concurrent schedule, and Switches >= 0 and only
// in a Concurrent one. A world checks its family and its ground truth
// first; Run panics on a frame ValidateFrame rejects.
func ValidateFrame(f Frame, m Messages) error {
	if f.Nodes < 1 || f.Nodes > MaxNodes {
		return fmt.Errorf("nodes is %d, want 1..%d (MaxNodes)", f.Nodes, MaxNodes)
	}
	if f.RetryAfter <= 0 || f.RetryAfter > MaxRetryAfter {
		return fmt.Errorf("retry is %s, want > 0 and <= %s (MaxRetryAfter)", f.RetryAfter, MaxRetryAfter)
	}
	if f.MaxAttempts < 1 || f.MaxAttempts > MaxAttempts {
		return fmt.Errorf("max-attempts is %d, want 1..%d (MaxAttempts)", f.MaxAttempts, MaxAttempts)
	}
	for _, c := range []struct {
		what   string
		n, max int
		limit  string
	}{
		{m.Noun + "s", m.N, MaxMsgs, "MaxMsgs"},
		{"deliveries", len(f.Deliveries), MaxDeliveries, "MaxDeliveries"},
		{"faults", len(f.Faults), MaxFaults, "MaxFaults"},
		{"switches", len(f.Switches), MaxSwitches, "MaxSwitches"},
	} {
		if c.n > c.max {
			return fmt.Errorf("%d %s, over the limit of %d (%s)", c.n, c.what, c.max, c.limit)
		}
	}
	for i, d := range f.Deliveries {
		if d.Msg < 0 || d.Msg >= m.N {
			return fmt.Errorf("delivery %d names %s%d, want %s0..%s%d", i, m.Letter, d.Msg, m.Letter, m.Letter, m.N-1)
		}
		if d.Node < 0 || d.Node >= f.Nodes {
			return fmt.Errorf("delivery %d is at node %d, want 0..%d", i, d.Node, f.Nodes-1)
		}
		if d.At < 0 || d.At > MaxAt {
			return fmt.Errorf("delivery %d is at %s, want 0..%s (MaxAt)", i, d.At, MaxAt)
		}
		if i > 0 && d.At < f.Deliveries[i-1].At {
			return fmt.Errorf("delivery %d at %s is before delivery %d at %s (deliveries are in time order)", i, d.At, i-1, f.Deliveries[i-1].At)
		}
	}
	if err := validateOutages(f); err != nil {
		return err
	}
	if f.Concurrent && len(f.Faults) > 0 {
		return errors.New("a concurrent schedule has no faults (free-running attempt numbers are not deterministic)")
	}
	if !f.Concurrent && len(f.Switches) > 0 {
		return errors.New("switches in a schedule that is not concurrent (they choose among same-time goroutines)")
	}
	for i, v := range f.Switches {
		if v < 0 {
			return fmt.Errorf("switch %d is %d, want >= 0", i, v)
		}
	}
	for i, x := range f.Faults {
		if x.Attempt < Recovery(MaxAttemptIndex) || x.Effect < 0 || x.Attempt > MaxAttemptIndex || x.Effect > MaxEffectIndex {
			return fmt.Errorf("fault %d is at %s, want attempt or recover 0..%d (MaxAttemptIndex) and effect 0..%d (MaxEffectIndex)", i, x.Point(), MaxAttemptIndex, MaxEffectIndex)
		}
		if x.OnDelivery && (x.Attempt < 0 || x.Attempt >= len(f.Deliveries)) {
			return fmt.Errorf("fault %d is at %s, want a planned delivery 0..%d", i, x.Point(), len(f.Deliveries)-1)
		}
		if x.Kind > Pause {
			return fmt.Errorf("fault %d has unknown kind %d", i, x.Kind)
		}
		switch {
		case x.Kind == Pause && (x.For <= 0 || x.For > MaxPause):
			return fmt.Errorf("fault %d pauses for %s, want > 0 and <= %s (MaxPause)", i, x.For, MaxPause)
		case x.Kind == Pause && x.Attempt < 0:
			return fmt.Errorf("fault %d pauses a Recover (%s): a pause stalls an attempt while the world goes on; Recover runs alone", i, x.Point())
		case x.Kind != Pause && x.For != 0:
			return fmt.Errorf("fault %d is a %s with a duration (only a pause has one)", i, x.Kind)
		}
		if i > 0 {
			if prev := f.Faults[i-1]; !prev.Before(x) {
				return fmt.Errorf("fault %d (%s) is not after fault %d (%s)", i, x.Point(), i-1, prev.Point())
			}
		}
	}
	return nil
}
