package lootprops

import (
	"fmt"
	"time"

	"github.com/onceproof/onceproof/engine"
	lootfaults "github.com/onceproof/onceproof/faults/loot"
)

// write is one change of a player's claim row as the world saw it: the
// view after the store call that made the row appear or changed its
// intent. Its At is the database's clock at that call (the virtual time
// of the call, which is what Store gives the design's database).
type write struct {
	player lootfaults.PlayerID
	intent lootfaults.Intent
	view   lootfaults.Event
}

// writes lists ss's claim-row writes in order: a view whose record holds a
// player's claim with another intent than the view before it (or none
// before) is that row's write. A change of only the row's other fields
// (its time, its fairness) is not a write of the claim: it changes no
// player's answer.
func (ss *seen) writes() []write {
	var out []write
	last := map[lootfaults.PlayerID]lootfaults.Intent{}
	for _, v := range ss.views {
		for _, c := range v.Detail.Record.Claims {
			if in, ok := last[c.Player]; !ok || in != c.Intent {
				last[c.Player] = c.Intent
				out = append(out, write{c.Player, c.Intent, v})
			}
		}
	}
	return out
}

// lastWrite is the write of p's row last seen at or before event seq
// (false if none).
func lastWrite(ws []write, p lootfaults.PlayerID, seq int) (write, bool) {
	var w write
	ok := false
	for _, x := range ws {
		if x.view.Seq > seq {
			break
		}
		if x.player == p {
			w, ok = x, true
		}
	}
	return w, ok
}

// late reports whether a write by the database's clock at at is outside
// session x's claim window: at or after its deadline. The window is
// half-open, now < deadline, because source 004 gives the deadline
// instant to the settle: its lockForSettle (5.3) locks once
// "deadline_at <= NOW()", and submitIntent refuses a claim once the
// deadline "has passed" (4.2, 校验截止时间是否已过), so a claim written at
// the deadline could land after a lock taken at that same instant.
func late(x lootfaults.Session, at time.Duration) bool { return at >= x.Deadline }

// checkInWindow: a claim is answered accepted (or already), and a claim
// that can win lands in the set that froze, only if the write of its row,
// with that intent,
// happened before the session's deadline by the database's clock (late).
// Source 004's 4.2 makes the deadline one of the four checks of a claim,
// and 2.3 and 4.3 close the window at the deadline: a claim written after
// it is one the other players, whose window had closed, could not answer.
//
// The contract is the write's time, never the answer's: a claim whose
// write landed before the deadline and whose answer came after (a slow
// reply, a retry told "already") is in time. An accepted claim with no
// write of its intent is HonestAnswer's (and FrozenClaims') business, and
// a claim written after the freeze but never in the frozen set is
// FrozenClaims'; here only the time is judged, once per write.
func checkInWindow(h lootfaults.History, obs []*seen) engine.Verdict {
	var as []engine.Anomaly
	sessions := obs
	ws := make([][]write, len(sessions))
	for i, ss := range sessions {
		ws[i] = ss.writes()
	}
	// A late write that was both accepted and frozen is one harm: one
	// anomaly, by the write's view and player.
	type once struct {
		seq    int
		player lootfaults.PlayerID
	}
	reported := map[once]bool{}
	report := func(w write, ss *seen, msg int, evs []lootfaults.Event, how string) {
		if k := (once{w.view.Seq, w.player}); !reported[k] {
			reported[k] = true
			as = append(as, anomaly(h, lootfaults.Properties.InWindow, msg, evs,
				"%s: player %d's %s claim was written at %s by the database's clock, not before the deadline %s, and %s", ss.x.No(), w.player, w.intent, w.view.At, ss.x.Deadline, how))
		}
	}
	for _, ack := range answered(h, lootfaults.Kinds.ClaimItem) {
		if ack.Ack != lootfaults.Accepted && ack.Ack != lootfaults.Already {
			continue
		}
		r := h.Schedule.Requests[ack.Msg]
		ss := sessions[r.Session]
		if w, ok := lastWrite(ws[r.Session], r.Player, ack.Seq); ok && w.intent == r.Intent && late(ss.x, w.view.At) {
			report(w, ss, ack.Msg, []lootfaults.Event{w.view, ack}, fmt.Sprintf("r%d was answered %s", r.ID, lootfaults.World.AckName(ack.Ack)))
		}
	}
	for i, ss := range sessions {
		if ss.freeze == nil {
			continue
		}
		for _, c := range ss.frozen {
			if !canWin(c) {
				// A PASS row in the set wins nothing; one a design
				// writes itself (a member who never answered, recorded
				// at the freeze) is no claim accepted. A late PASS a
				// player sent is judged by its answer above.
				continue
			}
			if w, ok := lastWrite(ws[i], c.Player, ss.freeze.Seq); ok && w.intent == c.Intent && late(ss.x, w.view.At) {
				report(w, ss, -1, []lootfaults.Event{w.view, *ss.freeze}, fmt.Sprintf("froze into the claim set at %s", ss.freeze.At))
			}
		}
	}
	return safety(lootfaults.Properties.InWindow, h, as)
}
