package lootprops

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/onceproof/onceproof/engine"
	lootfaults "github.com/onceproof/onceproof/faults/loot"
)

// checker judges one property on a history, given what observe read of
// it: Judge reads the history once for all of them (observe was 14% of a
// loot matrix's CPU when each of the 12 checkers read it again), so a
// checker must not change what it is given.
type checker func(h lootfaults.History, obs []*seen) engine.Verdict

// checkers maps every property to its checker. The safety properties are
// judged on whatever prefix a stalled or exhausted run produced (a
// violation there is a violation); NoLostGrant speaks of the drained end
// state, so such a run is Unknown for it.
var checkers = map[engine.Property]checker{
	lootfaults.Properties.NoOverGrant:  checkNoOverGrant,
	lootfaults.Properties.NoDupGrant:   checkNoDupGrant,
	lootfaults.Properties.NoLostGrant:  checkNoLostGrant,
	lootfaults.Properties.FrozenClaims: checkFrozenClaims,
	lootfaults.Properties.RuleOrder:    checkRuleOrder,
	lootfaults.Properties.Replayable:   checkReplayable,
	lootfaults.Properties.MembersOnly:  checkMembersOnly,
	lootfaults.Properties.OnTime:       checkOnTime,
	lootfaults.Properties.InWindow:     checkInWindow,
	lootfaults.Properties.ForwardOnly:  checkForwardOnly,
	lootfaults.Properties.HonestAnswer: checkHonestAnswer,
	lootfaults.Properties.Responsive:   checkResponsive,
}

// CheckProperty judges property p on h; an unknown property panics.
func CheckProperty(p engine.Property, h lootfaults.History) engine.Verdict {
	c, ok := checkers[p]
	if !ok {
		panic(fmt.Sprintf("lootprops.CheckProperty: unknown property %q", p))
	}
	return c(h, observe(h))
}

// Judge judges every property of lootfaults.World.Properties on h.
func Judge(h lootfaults.History) engine.Report {
	r := make(engine.Report, len(lootfaults.World.Properties))
	obs := observe(h)
	for i, p := range lootfaults.World.Properties {
		c, ok := checkers[p]
		if !ok {
			panic(fmt.Sprintf("lootprops.Judge: unknown property %q", p))
		}
		r[i] = c(h, obs)
	}
	return r
}

func safety(p engine.Property, h lootfaults.History, as []engine.Anomaly) engine.Verdict {
	return engine.Safety(p, h.Stalled, h.Exhausted, as)
}

func anomaly(h lootfaults.History, p engine.Property, msg int, evs []lootfaults.Event, format string, args ...any) engine.Anomaly {
	a := engine.NewAnomaly(h.Events, p, msg, evs)
	a.Explain = fmt.Sprintf(format, args...)
	return a
}

// checkNoOverGrant: a session delivers at most its quantity of items, none
// once it was ever canceled, and none to a player without a winning claim
// (a member's NEED or GREED) in the set that froze.
func checkNoOverGrant(h lootfaults.History, obs []*seen) engine.Verdict {
	var as []engine.Anomaly
	for _, ss := range obs {
		no := ss.x.No()
		if n := len(ss.items); n > ss.x.Quantity {
			as = append(as, anomaly(h, lootfaults.Properties.NoOverGrant, -1, ss.items, "%s delivered %d items for a drop of %d", no, n, ss.x.Quantity))
		}
		if ss.canceled && len(ss.items) > 0 {
			as = append(as, anomaly(h, lootfaults.Properties.NoOverGrant, -1, ss.items, "%s was canceled and still delivered %d item(s)", no, len(ss.items)))
		}
		for _, it := range ss.items {
			if p := it.Detail.Player; !ss.eligible(h.Schedule, p) {
				as = append(as, anomaly(h, lootfaults.Properties.NoOverGrant, -1, []lootfaults.Event{it}, "%s delivered an item to player %d, who has no winning claim in the set that froze", no, p))
			}
		}
	}
	return safety(lootfaults.Properties.NoOverGrant, h, as)
}

// checkNoDupGrant: no player gets a session's item twice (under two keys:
// the ledger applies one key once).
func checkNoDupGrant(h lootfaults.History, obs []*seen) engine.Verdict {
	var as []engine.Anomaly
	for _, ss := range obs {
		by := map[lootfaults.PlayerID][]lootfaults.Event{}
		var order []lootfaults.PlayerID
		for _, it := range ss.items {
			p := it.Detail.Player
			if len(by[p]) == 0 {
				order = append(order, p)
			}
			by[p] = append(by[p], it)
		}
		for _, p := range order {
			if its := by[p]; len(its) > 1 {
				keys := make([]string, len(its))
				for i, it := range its {
					keys[i] = it.Detail.Key
				}
				as = append(as, anomaly(h, lootfaults.Properties.NoDupGrant, -1, its, "player %d got %s's item %d times (keys %v)", p, ss.x.No(), len(its), keys))
			}
		}
	}
	return safety(lootfaults.Properties.NoDupGrant, h, as)
}

// checkNoLostGrant: once the schedule drained (every retry and Recover
// done), every session that took claims is CLOSED or CANCELED, and every
// winner of a CLOSED one holds its item. (A session still OPEN was never
// started: its start request failed and its sender gave up, which no
// design can make up for.) And no request went unanswered by a sender
// that resends until the drain and again after it (Frame.GiveUp false):
// MaxAttempts sends twice over, with at most a few faults among them, and
// never an answer is a design that lost the request (a never-answered open
// is a session, a never-answered claim a player's item).
func checkNoLostGrant(h lootfaults.History, obs []*seen) engine.Verdict {
	if h.Stalled || h.Exhausted {
		return engine.Verdict{Property: lootfaults.Properties.NoLostGrant, Outcome: engine.Unknown, Reason: "the run did not drain (it blocked or ran out of budget): retries or Recover may still have delivered"}
	}
	var as []engine.Anomaly
	if !h.Schedule.GiveUp {
		for _, e := range h.Events {
			if e.Kind == engine.EvGiveUp {
				as = append(as, anomaly(h, lootfaults.Properties.NoLostGrant, e.Msg, []lootfaults.Event{e}, "%s was never answered: %s", describe(h, e.Msg), e.Err))
			}
		}
	}
	for _, ss := range obs {
		last := ss.views
		if n := len(last); n > 0 {
			last = last[n-1:]
		}
		switch ss.final.Status {
		case lootfaults.Statuses.None, lootfaults.Statuses.Open, lootfaults.Statuses.Canceled:
		case lootfaults.Statuses.Closed:
			for _, w := range ss.winners() {
				if !slices.ContainsFunc(ss.items, func(e lootfaults.Event) bool { return e.Detail.Player == w }) {
					as = append(as, anomaly(h, lootfaults.Properties.NoLostGrant, -1, last, "%s closed with player %d among its winners, who never got the item", ss.x.No(), w))
				}
			}
		default:
			as = append(as, anomaly(h, lootfaults.Properties.NoLostGrant, -1, last, "%s is left %s after the drain, past its deadline and every lease", ss.x.No(), ss.final.Status))
		}
	}
	if len(as) > 0 {
		return engine.Verdict{Property: lootfaults.Properties.NoLostGrant, Outcome: engine.Fails, Anomalies: as}
	}
	return engine.Verdict{Property: lootfaults.Properties.NoLostGrant, Outcome: engine.Holds}
}

// settled is the set the session's result was computed from: its audit
// snapshot's claims, or, without one, the claims on record when it closed.
//
// What that evidence must hold is the source document's 4.6: the snapshot
// records the participants, the valid claims (有效表态: NEED and GREED,
// the rows its ranking query selects, intent_type <> 'PASS'), the grants
// and the rule version. So the evidence must hold every claim that can win,
// with what it ranks by; a PASS row may be there (the reference keeps it:
// the player answered) or not, since a PASS never wins and cannot change
// the replay. FrozenClaims and Replayable judge only the claims that can
// win (canWin), in any order.
func (ss *seen) settled() ([]lootfaults.Claim, bool) {
	if ss.final.Snapshot != nil {
		return ss.final.Snapshot.Claims, true
	}
	for _, v := range ss.views {
		if v.Detail.Record.Status == lootfaults.Statuses.Closed {
			return v.Detail.Record.Claims, true
		}
	}
	return nil, false
}

// checkFrozenClaims: a claim answered accepted (or already) before the
// claim set froze is in the set the result was computed from, unless it is
// a PASS (settled says why the evidence may leave PASS rows out), and no
// claim is answered so after it froze unless the set that froze holds it
// (a retry of a claim recorded in time, told what its first send earned:
// source 004's 2.2 makes a repeated claim "already there", not an error;
// a claim written after the freeze is not in the set, so still fails).
// Whether a claim is a PASS is the database's word at the freeze (the
// player's row then: a player may change its answer before the deadline),
// or the request's for a player with no row (a claim answered accepted
// and never written).
func checkFrozenClaims(h lootfaults.History, obs []*seen) engine.Verdict {
	var as []engine.Anomaly
	sessions := obs
	for _, ack := range answered(h, lootfaults.Kinds.ClaimItem) {
		if ack.Ack != lootfaults.Accepted && ack.Ack != lootfaults.Already {
			continue
		}
		r := h.Schedule.Requests[ack.Msg]
		ss := sessions[r.Session]
		if ss.freeze == nil {
			continue // never settled: NoLostGrant's business
		}
		if ack.Seq > ss.freeze.Seq && !slices.ContainsFunc(ss.frozen, func(c lootfaults.Claim) bool { return c.Player == r.Player && c.Intent == r.Intent }) {
			as = append(as, anomaly(h, lootfaults.Properties.FrozenClaims, ack.Msg, []lootfaults.Event{*ss.freeze, ack},
				"r%d, player %d's %s claim, was answered %s at %s, after %s's claims froze at %s", r.ID, r.Player, r.Intent, lootfaults.World.AckName(ack.Ack), ack.At, ss.x.No(), ss.freeze.At))
			continue
		}
		when := "before"
		if ack.Seq > ss.freeze.Seq {
			when = "after" // a late retry, told what its first send earned
		}
		in := r.Intent
		if i := slices.IndexFunc(ss.frozen, func(c lootfaults.Claim) bool { return c.Player == r.Player }); i >= 0 {
			in = ss.frozen[i].Intent
		}
		set, ok := ss.settled()
		if ok && canWin(lootfaults.Claim{Intent: in}) && !slices.ContainsFunc(set, func(c lootfaults.Claim) bool { return c.Player == r.Player }) {
			as = append(as, anomaly(h, lootfaults.Properties.FrozenClaims, ack.Msg, []lootfaults.Event{ack, *ss.freeze},
				"r%d, player %d's %s claim, was answered %s %s %s froze, but the result was computed without it", r.ID, r.Player, r.Intent, lootfaults.World.AckName(ack.Ack), when, ss.x.No()))
		}
	}
	return safety(lootfaults.Properties.FrozenClaims, h, as)
}

// checkRuleOrder: a closed session's winners are the oracle's: the top
// quantity of the frozen claims of members of its snapshot by priority,
// fairness (the server's), claim time and player id. The claim time is when the world
// saw the player's row take its current intent: a repeat of the same
// intent keeps it, a change (up or down) moves it to the change's write,
// so an early GREED upgraded to NEED late ranks after every NEED declared
// in between (the oracle's doc gives the argument from source 004 §4.4).
//
// The fairness is the server's record at settle time. Source 004 ranks at
// the settle ("服务端排序结算", its selectRanked after the lockForSettle
// CAS) by "历史获取次数", how many times the player got the item, so that
// nobody takes the same item twice running ("不会同一个人连续拿同一件东西"):
// a count read at the claim, before a win the player had since, would
// defeat that, so a record that changed between a claim and the freeze
// ranks by its value at the freeze, not the claim's (the document's code
// stores the client's fair_score at the claim; the world's honest clients
// send the record then, which is the same unless it changed in between).
// A settle is not an instant, though: a settler freezes, then reads the
// record, then writes its result (ref/loot reads it once, after the
// freeze). So the winners must be the ranking under the record as of one
// moment from the freeze to the first record of the session CLOSED (truths);
// a settler that ranks with one read and writes another into its evidence
// is Replayable's to catch.
func checkRuleOrder(h lootfaults.History, obs []*seen) engine.Verdict {
	var as []engine.Anomaly
	for _, ss := range obs {
		if ss.final.Status != lootfaults.Statuses.Closed || ss.freeze == nil {
			continue
		}
		wants, got := ss.truths(h), ss.winners()
		if want := wants[0]; !slices.ContainsFunc(wants, func(w []lootfaults.PlayerID) bool { return sameSet(w, got) }) {
			as = append(as, anomaly(h, lootfaults.Properties.RuleOrder, -1, ss.views[len(ss.views)-1:],
				"%s's winners are %v; by the rule (priority, then fewest wins, then the earliest claim, then the lowest id) over the claims that froze they are %v", ss.x.No(), got, want))
		}
	}
	return safety(lootfaults.Properties.RuleOrder, h, as)
}

// checkReplayable: a closed session's recorded evidence (its audit
// snapshot, or without one the claims on record) replays to its recorded
// winners, the winners are the players it granted, and the evidence's
// claims that can win are those of the set that froze (not those some node
// saw at another moment), in whatever order the design lists them; PASS
// rows are the design's to keep or leave out (settled).
func checkReplayable(h lootfaults.History, obs []*seen) engine.Verdict {
	var as []engine.Anomaly
	for _, ss := range obs {
		if ss.final.Status != lootfaults.Statuses.Closed {
			continue
		}
		last := ss.views[len(ss.views)-1:]
		set, _ := ss.settled()
		won := ss.winners()
		if again := replay(ss.x.Quantity, set); !slices.Equal(again, won) {
			as = append(as, anomaly(h, lootfaults.Properties.Replayable, -1, last, "%s's recorded claims replay to the winners %v, not the recorded %v", ss.x.No(), again, won))
		}
		if ss.final.Snapshot != nil && !sameSet(ss.final.Snapshot.Winners, ss.final.Granted) {
			as = append(as, anomaly(h, lootfaults.Properties.Replayable, -1, last, "%s's snapshot names the winners %v but the grants on record are %v", ss.x.No(), ss.final.Snapshot.Winners, ss.final.Granted))
		}
		if !sameClaims(set, ss.frozen) {
			// Both sides cut to the claims that can win, sorted by player
			// (sameClaims), so a snapshot without PASS rows or in rank
			// order is the frozen set it came from.
			as = append(as, anomaly(h, lootfaults.Properties.Replayable, -1, last, "%s's result was computed from the claims %s, but the claims that froze were %s", ss.x.No(), claimList(set), claimList(ss.frozen)))
		}
	}
	return safety(lootfaults.Properties.Replayable, h, as)
}

// sameClaims reports whether a and b hold the same claims that can win
// (player and intent), whatever their order and their PASS rows.
func sameClaims(a, b []lootfaults.Claim) bool {
	valid := func(cs []lootfaults.Claim) []lootfaults.Claim {
		out := slices.DeleteFunc(slices.Clone(cs), func(c lootfaults.Claim) bool { return !canWin(c) })
		slices.SortStableFunc(out, func(x, y lootfaults.Claim) int { return cmp.Compare(x.Player, y.Player) })
		return out
	}
	return slices.EqualFunc(valid(a), valid(b), func(x, y lootfaults.Claim) bool { return x.Player == y.Player && x.Intent == y.Intent })
}

// canWin reports whether c is a valid claim (NEED or GREED), one the rule
// ranks: the claims the evidence must hold.
func canWin(c lootfaults.Claim) bool { return c.Intent.Priority() > 0 }

func claimList(cs []lootfaults.Claim) string {
	s := "["
	for i, c := range cs {
		if i > 0 {
			s += " "
		}
		s += fmt.Sprintf("%d:%s", c.Player, c.Intent)
	}
	return s + "]"
}

// checkMembersOnly: no claim of a player outside its session's team
// snapshot (taken when the session opened: source 004's §5 judges claims
// by it, not by the live team) is recorded, or answered accepted.
func checkMembersOnly(h lootfaults.History, obs []*seen) engine.Verdict {
	var as []engine.Anomaly
	for _, ss := range obs {
		reported := map[lootfaults.PlayerID]bool{}
		for _, v := range ss.views {
			for _, c := range v.Detail.Record.Claims {
				if !h.Schedule.MemberOf(ss.x.ID, c.Player) && !reported[c.Player] {
					reported[c.Player] = true
					as = append(as, anomaly(h, lootfaults.Properties.MembersOnly, -1, []lootfaults.Event{v}, "%s recorded a %s claim of player %d, who is not in its team snapshot %v", ss.x.No(), c.Intent, c.Player, h.Schedule.TeamOf(ss.x.ID)))
				}
			}
		}
	}
	return safety(lootfaults.Properties.MembersOnly, h, as)
}

// checkOnTime: no session starts settling (or closes) before its deadline
// by the database's clock.
func checkOnTime(h lootfaults.History, obs []*seen) engine.Verdict {
	var as []engine.Anomaly
	for _, ss := range obs {
		if f := ss.freeze; f != nil && f.At < ss.x.Deadline {
			as = append(as, anomaly(h, lootfaults.Properties.OnTime, -1, []lootfaults.Event{*f}, "%s went %s at %s by the database's clock, before its deadline %s", ss.x.No(), f.Detail.Record.Status, f.At, ss.x.Deadline))
		}
	}
	return safety(lootfaults.Properties.OnTime, h, as)
}

// checkForwardOnly: every status change follows source 004's table
// (lootfaults.Forward): forward, CANCELED before CLOSED, never back.
//
// The contract is the table's reason (the source document's 2.3): the
// claims freeze at the lock and nothing ever goes back. The world reads
// the database after every store call, so one atomic write that takes
// several forward edges (a serializable transaction that freezes, ranks
// and closes: CLAIMING -> SETTLING -> CLOSED with no reader able to see
// the middle) shows as one change, CLAIMING -> CLOSED: what an observer of
// the reference would see if its two writes were one. A change is
// therefore accepted when a path of the table's edges leads from the
// status before it to the status after it (Forward's transitive closure),
// and refused when none does: backwards (CLOSED -> SETTLING, SETTLING ->
// CLAIMING), out of a final status (CLOSED -> CANCELED, CANCELED -> ...),
// or off the table. The freeze such a write makes is still judged by
// OnTime and FrozenClaims, at the view that shows it.
//
// And a session number has one status path: the table is the life of one
// session, and source 004 keys the session by its number (uk_session_no,
// its business key; a repeated request is idempotent, 2.2), so a second
// record under the number (Record.Others: a repeated open or start that
// inserted again) is a second session of one drop, whose own path starts
// from nothing while the first's is under way and which a settle can
// allocate a second time. ForwardOnly reports it once per session, at the
// first view that shows it, whatever the extra record says.
func checkForwardOnly(h lootfaults.History, obs []*seen) engine.Verdict {
	statuses := []lootfaults.Status{lootfaults.Statuses.Open, lootfaults.Statuses.Claiming, lootfaults.Statuses.Settling, lootfaults.Statuses.Closed, lootfaults.Statuses.Canceled}
	// reachable: a path of table edges from one status to another. The
	// table has no cycle, so a path is at most 4 edges long (OPEN ->
	// CLAIMING -> SETTLING -> CLOSED from nothing) and the search ends.
	var reachable func(from, to lootfaults.Status) bool
	reachable = func(from, to lootfaults.Status) bool {
		for _, next := range statuses {
			if lootfaults.Forward(from, next) && (next == to || reachable(next, to)) {
				return true
			}
		}
		return false
	}
	var as []engine.Anomaly
	for _, ss := range obs {
		from := lootfaults.Statuses.None
		twice := false
		for _, v := range ss.views {
			rec := v.Detail.Record
			to := rec.Status
			if to != from && !reachable(from, to) {
				as = append(as, anomaly(h, lootfaults.Properties.ForwardOnly, -1, []lootfaults.Event{v}, "%s went from %s to %s", ss.x.No(), statusName(from), statusName(to)))
			}
			from = to
			if len(rec.Others) > 0 && !twice {
				twice = true
				as = append(as, anomaly(h, lootfaults.Properties.ForwardOnly, -1, []lootfaults.Event{v}, "%s has %d records under its number (%s): a session number names one session", ss.x.No(), 1+len(rec.Others), statusList(*rec)))
			}
		}
	}
	return safety(lootfaults.Properties.ForwardOnly, h, as)
}

// statusList is the statuses of rec and its Others, in order.
func statusList(rec lootfaults.Record) string {
	out := statusName(rec.Status)
	for _, o := range rec.Others {
		out += ", " + statusName(o.Status)
	}
	return out
}

func statusName(s lootfaults.Status) string {
	if s == lootfaults.Statuses.None {
		return "nothing"
	}
	return string(s)
}

// checkHonestAnswer: an answer says accepted, already or recorded only
// when the database (and the inventory) say so when it is given: a session
// opened, claims started, the claim recorded with its intent, the session
// canceled, closed, and for a settle answered accepted every winner's item
// delivered. And it says refused only when the rules say no: an open of a
// session that does not exist, or a member's claim on a CLAIMING session,
// before the deadline by the database's clock from the request's arrival
// to its answer, is never refused (wrongRefusal), nor answered noted
// without taking effect.
func checkHonestAnswer(h lootfaults.History, obs []*seen) engine.Verdict {
	var as []engine.Anomaly
	sessions := obs
	for i, e := range h.Events {
		if e.Kind != engine.EvAck || (e.Ack != lootfaults.Accepted && e.Ack != lootfaults.Already && e.Ack != lootfaults.Recorded && e.Ack != lootfaults.Refused && e.Ack != lootfaults.Noted) {
			continue
		}
		r := h.Schedule.Requests[e.Msg]
		if r.Session < 0 {
			continue
		}
		ss := sessions[r.Session]
		if e.Ack == lootfaults.Refused {
			if why := wrongRefusal(h, ss, r, i); why != "" {
				as = append(as, anomaly(h, lootfaults.Properties.HonestAnswer, e.Msg, []lootfaults.Event{e}, "%s was refused, but %s", describe(h, r.ID), why))
			}
			continue
		}
		if e.Ack == lootfaults.Noted {
			// Noted claims nothing, but an open or a claim the rules said
			// yes to throughout must have taken effect by its answer: a
			// "noted" that recorded nothing is a refusal in disguise.
			rec := ss.recordAt(e.Seq)
			taken := rec.Status != lootfaults.Statuses.None
			if r.Kind == lootfaults.Kinds.ClaimItem {
				taken = slices.ContainsFunc(rec.Claims, func(c lootfaults.Claim) bool { return c.Player == r.Player && c.Intent == r.Intent })
			}
			if why := wrongRefusal(h, ss, r, i); why != "" && !taken {
				as = append(as, anomaly(h, lootfaults.Properties.HonestAnswer, e.Msg, []lootfaults.Event{e}, "%s was answered noted and nothing was recorded, but %s", describe(h, r.ID), why))
			}
			continue
		}
		rec := ss.recordAt(e.Seq)
		var lie string
		switch r.Kind {
		case lootfaults.Kinds.OpenSession:
			if rec.Status == lootfaults.Statuses.None {
				lie = "the session does not exist"
			}
		case lootfaults.Kinds.StartClaims:
			if rec.Status == lootfaults.Statuses.None || rec.Status == lootfaults.Statuses.Open {
				lie = fmt.Sprintf("the session is %s", statusName(rec.Status))
			}
		case lootfaults.Kinds.ClaimItem:
			if !slices.ContainsFunc(rec.Claims, func(c lootfaults.Claim) bool { return c.Player == r.Player && c.Intent == r.Intent }) {
				lie = fmt.Sprintf("no %s claim of player %d is recorded", r.Intent, r.Player)
			}
		case lootfaults.Kinds.CancelSession:
			if rec.Status != lootfaults.Statuses.Canceled {
				lie = fmt.Sprintf("the session is %s", statusName(rec.Status))
			}
		case lootfaults.Kinds.SettleNow:
			switch {
			case rec.Status != lootfaults.Statuses.Closed:
				lie = fmt.Sprintf("the session is %s", statusName(rec.Status))
			case e.Ack == lootfaults.Accepted:
				for _, w := range winnersOf(rec) {
					if !slices.ContainsFunc(ss.items, func(it lootfaults.Event) bool { return it.Detail.Player == w && it.Seq < e.Seq }) {
						lie = fmt.Sprintf("winner %d's item is not delivered", w)
						break
					}
				}
			}
		}
		if lie != "" {
			as = append(as, anomaly(h, lootfaults.Properties.HonestAnswer, e.Msg, []lootfaults.Event{e}, "r%d (%s %s) was answered %s, but %s", r.ID, r.Kind, ss.x.No(), lootfaults.World.AckName(e.Ack), lie))
		}
	}
	return safety(lootfaults.Properties.HonestAnswer, h, as)
}

// wrongRefusal says why the rules said yes to r at every instant of the
// attempt whose answer, refused, is event ack ("" when they did not, or
// when the world cannot tell): the database's time, which is the virtual
// time, was before the session's deadline from the attempt's arrival to
// its answer, and every record of the session seen in between was the one
// the request needs (no session for an open; CLAIMING, with r's player in
// the team, for a claim). A refusal decided at any instant of the attempt
// was therefore against the rules, whichever call decided it. Other kinds
// are not judged: a settle may be refused while another settler holds the
// session, a cancel once the result is due, and a start races nothing the
// generated schedules make wrong.
func wrongRefusal(h lootfaults.History, ss *seen, r lootfaults.Request, ack int) string {
	e := h.Events[ack]
	if e.At >= ss.x.Deadline {
		return ""
	}
	from := ack
	for from > 0 && !(h.Events[from].Kind == engine.EvArrive && h.Events[from].Attempt == e.Attempt) {
		from--
	}
	var want lootfaults.Status
	switch r.Kind {
	case lootfaults.Kinds.OpenSession:
		want = lootfaults.Statuses.None
	case lootfaults.Kinds.ClaimItem:
		if !h.Schedule.MemberOf(r.Session, r.Player) {
			return ""
		}
		want = lootfaults.Statuses.Claiming
	default:
		return ""
	}
	if ss.recordAt(h.Events[from].Seq).Status != want {
		return ""
	}
	for _, v := range ss.views {
		if v.Seq > h.Events[from].Seq && v.Seq < e.Seq && v.Detail.Record.Status != want {
			return ""
		}
	}
	if want == lootfaults.Statuses.None {
		return fmt.Sprintf("%s did not exist and its deadline %v was ahead by the database's clock (%v) from the open's arrival to its answer", ss.x.No(), ss.x.Deadline, e.At)
	}
	return fmt.Sprintf("%s was CLAIMING, player %d is in the team, and the deadline %v was ahead by the database's clock (%v) from the claim's arrival to its answer", ss.x.No(), r.Player, ss.x.Deadline, e.At)
}

func winnersOf(rec lootfaults.Record) []lootfaults.PlayerID {
	if rec.Snapshot != nil {
		return rec.Snapshot.Winners
	}
	return rec.Granted
}

// checkResponsive: every Handle and Recover returns: no panic, no
// deadlock (engine.CheckResponsive).
func checkResponsive(h lootfaults.History, obs []*seen) engine.Verdict {
	return engine.CheckResponsive(h.Events, h.Exhausted, lootfaults.Properties.Responsive, "r", func(id int) string { return describe(h, id) })
}

// describe names request id with what a reader needs.
func describe(h lootfaults.History, id int) string {
	if id < 0 || id >= len(h.Schedule.Requests) {
		return fmt.Sprintf("r%d", id)
	}
	r := h.Schedule.Requests[id]
	switch {
	case r.Kind == lootfaults.Kinds.ClaimItem:
		return fmt.Sprintf("r%d (player %d's %s claim on x%d)", id, r.Player, r.Intent, r.Session)
	case r.Session >= 0:
		return fmt.Sprintf("r%d (%s x%d)", id, r.Kind, r.Session)
	}
	return fmt.Sprintf("r%d (%s)", id, r.Kind)
}
