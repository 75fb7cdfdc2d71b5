package ref

import "fmt"

// State is the lifecycle of one grant. The state machine is what makes a
// replayed grant a no-op instead of a second payout: a key that is already past
// StateNew can never be granted again, and states only move forward.
type State uint8

const (
	// StateNew: no record. A store never returns it with created=false; the
	// seed-form Settle returns it with fresh=false when the store failed, which
	// means "nothing happened, retry".
	StateNew State = iota
	// StateGranted: the claim is on record and the effect may or may not have
	// been delivered. Whoever finds it completes it through the idempotent Sink.
	StateGranted
	// StateDelivered: the effect is durable in the sink. Terminal.
	StateDelivered
)

func (s State) String() string {
	switch s {
	case StateNew:
		return "New"
	case StateGranted:
		return "Granted"
	case StateDelivered:
		return "Delivered"
	}
	return fmt.Sprintf("State(%d)", uint8(s))
}
