package lootprops

import (
	"time"

	"github.com/onceproof/onceproof/engine"
	lootfaults "github.com/onceproof/onceproof/faults/loot"
)

// seen is what a history shows of one session: its records as the world
// read them after every store call, the items delivered, and what follows
// from them. The properties judge sessions through it.
type seen struct {
	x     lootfaults.Session
	views []lootfaults.Event // EvView events, in order
	// freeze is the first view in SETTLING (or CLOSED, for a design that
	// skips SETTLING): the moment the claim set froze; frozen its claims.
	freeze *lootfaults.Event
	frozen []lootfaults.Claim
	// claimedAt is when each player's claim row last took its current
	// intent, by the database's clock (the time of the store call that
	// wrote it): a view that shows the row with another intent than the
	// view before moves it, one that shows the same intent keeps it (the
	// claim time rule: checkRuleOrder's doc). intent is the intent the
	// views last showed.
	claimedAt map[lootfaults.PlayerID]time.Duration
	intent    map[lootfaults.PlayerID]lootfaults.Intent
	// final is the record at the end; canceled whether it was ever
	// CANCELED.
	final    lootfaults.Record
	canceled bool
	// items are the EvItem events the ledger applied.
	items []lootfaults.Event
}

// observe reads h once into a seen per session.
func observe(h lootfaults.History) []*seen {
	out := make([]*seen, len(h.Schedule.Sessions))
	for i, x := range h.Schedule.Sessions {
		out[i] = &seen{x: x, claimedAt: map[lootfaults.PlayerID]time.Duration{}, intent: map[lootfaults.PlayerID]lootfaults.Intent{}}
	}
	for i := range h.Events {
		e := &h.Events[i]
		if e.Detail.Session < 0 || e.Detail.Session >= len(out) {
			continue
		}
		ss := out[e.Detail.Session]
		switch e.Kind {
		case lootfaults.Events.View:
			rec := e.Detail.Record
			ss.views = append(ss.views, *e)
			ss.final = *rec
			for _, c := range rec.Claims {
				if in, ok := ss.intent[c.Player]; !ok || in != c.Intent {
					ss.claimedAt[c.Player], ss.intent[c.Player] = e.At, c.Intent
				}
			}
			if ss.freeze == nil && (rec.Status == lootfaults.Statuses.Settling || rec.Status == lootfaults.Statuses.Closed) {
				ss.freeze = e
				ss.frozen = rec.Claims
			}
			if rec.Status == lootfaults.Statuses.Canceled {
				ss.canceled = true
			}
		case lootfaults.Events.Item:
			if e.Detail.OK {
				ss.items = append(ss.items, *e)
			}
		}
	}
	return out
}

// winners is the session's result as the design recorded it: its audit
// snapshot's winners, or, without a snapshot, the players it granted.
func (ss *seen) winners() []lootfaults.PlayerID {
	if ss.final.Snapshot != nil {
		return ss.final.Snapshot.Winners
	}
	return ss.final.Granted
}

// recordAt is the session's record as of event seq: the last view before
// it (the zero Record before the first).
func (ss *seen) recordAt(seq int) lootfaults.Record {
	var rec lootfaults.Record
	for _, v := range ss.views {
		if v.Seq > seq {
			break
		}
		rec = *v.Detail.Record
	}
	return rec
}

// eligible reports whether p's claim in the frozen set can win: a NEED
// or GREED of a member of the session's snapshot.
func (ss *seen) eligible(s lootfaults.Schedule, p lootfaults.PlayerID) bool {
	for _, c := range ss.frozen {
		if c.Player == p {
			return s.MemberOf(ss.x.ID, p) && c.Intent.Priority() > 0
		}
	}
	return false
}

// answered lists the answers (EvAck) of requests of kind k, with the
// request.
func answered(h lootfaults.History, k lootfaults.Kind) []lootfaults.Event {
	var out []lootfaults.Event
	for _, e := range h.Events {
		if e.Kind == engine.EvAck && e.Msg >= 0 && h.Schedule.Requests[e.Msg].Kind == k {
			out = append(out, e)
		}
	}
	return out
}
