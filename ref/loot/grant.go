package loot

import (
	"fmt"
	"time"
)

// GrantStatus is a grant's delivery state. Stores keep it as its text.
type GrantStatus string

const (
	// GrantPending: recorded, delivery not confirmed. Whoever holds its
	// lease (the settler first, then compensation) delivers it through the
	// Inventory with its GrantNo.
	GrantPending GrantStatus = "PENDING"
	// GrantSuccess: the Inventory confirmed delivery. Terminal: nothing
	// moves a grant back, and nothing ever deletes one.
	GrantSuccess GrantStatus = "SUCCESS"
)

// Grant is one item for one winner: a row keyed by a unique grant number.
type Grant struct {
	// No is GrantNo(Session, Player, Loot): the key the Inventory dedups by.
	No      string
	Session string
	Player  PlayerID
	Loot    string
	// Quantity is 1: the top Quantity winners get one item each.
	Quantity int
	// Rank is the winner's place, from 1.
	Rank   int
	Status GrantStatus
	// Attempts counts compensation leases taken on the grant (0 when the
	// settler's own delivery succeeded): the retry count to monitor.
	Attempts int
	// LeaseUntil is when the current holder's lease ends (store clock):
	// LeaseGrants hands the grant to nobody else until then.
	LeaseUntil time.Time
}

// Backoff is the compensation lease policy: the n-th LeaseGrants of a
// grant (n counted from 1) holds it for min(Base * 2^(n-1), Max) by the
// store's clock. The lease is the backoff: a delivery that failed is tried
// again only after it ends, ever more slowly, and never given up (a grant
// left undelivered would be a lost item; monitor Attempts instead).
type Backoff struct {
	Base time.Duration
	Max  time.Duration
	_    struct{}
}

// DefaultBackoff: 1s doubles to 5 minutes by the 10th attempt (2^9 s >
// 300 s), so an inventory that is down for a minute is retried about six
// times, one that is down for an hour about 17.
var DefaultBackoff = Backoff{Base: time.Second, Max: 5 * time.Minute}

// Lease returns the lease of the attempt-th lease (from 1).
func (b Backoff) Lease(attempt int) time.Duration {
	d := b.Base
	for i := 1; i < attempt && d < b.Max; i++ {
		if d > b.Max/2 {
			return b.Max // doubling would pass Max (or overflow)
		}
		d *= 2
	}
	return min(d, b.Max)
}

func (b Backoff) validate() error {
	if b.Base <= 0 || b.Max < b.Base {
		return fmt.Errorf("%w: backoff %v..%v, want 0 < Base <= Max", ErrBadArgument, b.Base, b.Max)
	}
	return nil
}
