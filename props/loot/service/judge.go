package lootservice

import (
	"cmp"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/onceproof/onceproof/engine"
	lootfaults "github.com/onceproof/onceproof/faults/loot"
	lootprops "github.com/onceproof/onceproof/props/loot"
	"github.com/onceproof/onceproof/props/loot/service/inventory"
)

// Verdicts of a Finding.
const (
	Held      = "held"
	Failed    = "failed"
	NotJudged = "not judged"
)

// Finding is one property's verdict on one run, as a black box judged it.
type Finding struct {
	Property engine.Property
	// Verdict is Held, Failed or NotJudged.
	Verdict string
	// How says what the verdict rests on (for NotJudged: why not).
	How string
	// Anomalies explain a failure, one line each.
	Anomalies []string
}

// DefaultTolerance is how far the judge lets the harness's clock and the
// service's disagree when it compares a sample's time with a deadline the
// service recorded: the two read one host's clock (or, for a remote
// database, one NTP-disciplined clock, within a few ms), and a deadline
// travels in microseconds. A deadline is moved by it in the direction that
// makes a failure harder, never easier.
const DefaultTolerance = 20 * time.Millisecond

// Judge judges a record with the loot properties. Every property is
// computed by lootprops on a history built from the record (see build): a
// sample proves that the state it read held at some instant between its
// request and its answer, so each property is judged on the placement of
// the samples under which its failures are sound:
//
//   - late: a round of samples placed at the start of the round before it.
//     A change first seen in round k happened after that time, and the
//     record in force at an answer is one read after the answer: what an
//     accepted answer said has taken effect must be there. InWindow (a
//     write is late only if it surely came after the deadline) and
//     HonestAnswer are judged on it, and everything that does not depend
//     on time.
//   - early: a round placed at its last answer: the state held by then.
//     OnTime (a freeze surely before the deadline) and RuleOrder (claim
//     times) are judged on it.
//
// Some things a black box cannot see, and the Finding says so: the
// order of two claims the samples cannot order (RuleOrder), the row under
// a claim a player changed again before the next read (HonestAnswer), an
// attempt that hangs rather than ends (Responsive).
func Judge(r Record, tolerance time.Duration) ([]Finding, error) {
	w, err := r.Workload()
	if err != nil {
		return nil, err
	}
	spec, err := ParseSpec("the record's spec", r.Run.Spec)
	if err != nil {
		return nil, err
	}
	b := build(w, spec, r)
	why := b.unread()
	if !spec.Has("session") && !b.sql {
		why = "the service has no session read and the database was not read (give the command the database): its state was never seen"
	}
	if why != "" {
		var out []Finding
		for _, p := range lootfaults.World.Properties {
			out = append(out, Finding{Property: p, Verdict: NotJudged, How: why})
		}
		return out, nil
	}
	late := b.history(false, tolerance)
	early := b.history(true, -tolerance)
	honest := b.history(false, -tolerance)
	samples := fmt.Sprintf("judged from %d sampling rounds of %d reads", b.rounds, len(r.Samples))
	items := b.itemsHow()
	claims := "from the claims the players' reads and the audit snapshot show (an outsider's row that its player's read hides is not seen)"
	if b.sql {
		claims = "from the database's claim rows (the spec's sql claims query) and the audit snapshot"
	}
	byKey := ", by grant number"
	if r.Run.Inventory {
		byKey = "" // the ledger's account says how it groups
	}
	lost := "from the last round, read after the drain, and the sender's give-ups"
	if r.Run.Inventory {
		lost = "from the last round, read after the drain, the sender's give-ups, and the hosted inventory's ledger, read after the drain"
	}
	wins := "the snapshot reports (a black box cannot read the service's fairness record)"
	if !spec.Has("audit") && b.fair {
		wins = "the database's claim rows record (the spec's sql claims query's fourth column) in the round that showed the freeze, and the grants as the winners"
	}
	how := map[engine.Property]struct {
		h   lootfaults.History
		how string
	}{
		lootfaults.Properties.NoOverGrant:  {late, items + "; " + samples},
		lootfaults.Properties.NoDupGrant:   {late, items + byKey + "; " + samples},
		lootfaults.Properties.NoLostGrant:  {late, lost + "; " + items},
		lootfaults.Properties.FrozenClaims: {late, "from the answers, the claims read in the first round that showed the freeze, and the audit snapshot"},
		lootfaults.Properties.RuleOrder:    {early, "by the oracle over the frozen claims, ordered by the rounds that first showed each intent, with the wins " + wins},
		lootfaults.Properties.Replayable:   {late, "from the audit snapshot and grants, against the claims seen frozen"},
		lootfaults.Properties.MembersOnly:  {late, claims},
		lootfaults.Properties.OnTime:       {early, fmt.Sprintf("a freeze seen before the recorded deadline less %v; a freeze between two rounds is dated by the later one; ", tolerance) + samples},
		lootfaults.Properties.InWindow:     {late, fmt.Sprintf("a claim row first seen in a round that began after the recorded deadline plus %v; ", tolerance) + samples},
		lootfaults.Properties.ForwardOnly:  {late, "status changes " + samples + " (a change between two rounds that went and came back is not seen)"},
		lootfaults.Properties.HonestAnswer: {honest, "each answer against the first round sent after it; " + samples},
	}
	against := b.againstLedger()
	var out []Finding
	for _, p := range lootfaults.World.Properties {
		hw, ok := how[p]
		if !ok {
			out = append(out, Finding{Property: p, Verdict: NotJudged, How: "a black box's request ends by the client's timeout: a request that never returns shows as unknown answers and NoLostGrant's give-ups"})
			continue
		}
		if why := absent(spec, b.sql, b.fair, p); why != "" {
			out = append(out, Finding{Property: p, Verdict: NotJudged, How: why})
			continue
		}
		if why := b.cannot(p); why != "" {
			out = append(out, Finding{Property: p, Verdict: NotJudged, How: why})
			continue
		}
		v := lootprops.CheckProperty(p, hw.h)
		f := Finding{Property: p, How: hw.how}
		switch v.Outcome {
		case engine.Holds:
			f.Verdict = Held
		case engine.Fails:
			f.Verdict = Failed
			for _, a := range v.Anomalies {
				f.Anomalies = append(f.Anomalies, a.Explain)
			}
		default:
			f.Verdict, f.How = NotJudged, v.Reason
		}
		if as, ok := against[p]; ok && f.Verdict != NotJudged {
			f.How += "; " + againstHow
			if len(as) > 0 {
				f.Verdict, f.Anomalies = Failed, append(f.Anomalies, as...)
			}
		}
		out = append(out, f)
	}
	return out, nil
}

// round is one sampling round of a session, as a Record.
type round struct {
	sent, done time.Duration
	rec        lootfaults.Record
	delivered  []item
	// grants are the grant rows the round read, from the session read or
	// the database's grants query (the same grant from both is twice).
	grants []grantRow
}

// grantRow is one grant as the service's rows show it.
type grantRow struct {
	no        string
	player    lootfaults.PlayerID
	delivered bool   // its status is the spec's grant.delivered
	from      string // where it was read: the session read, the database
}

type item struct {
	player lootfaults.PlayerID
	key    string
}

// builder holds what the record shows, per session.
type builder struct {
	w        Workload
	spec     Spec
	r        Record
	rounds   int
	sessions [][]round
	deadline []time.Duration // the deadline the service recorded (or the workload's)
	// mine are each session's players' reads of their claims, in order:
	// their own reads, or the database's claim rows when it was read.
	mine []map[lootfaults.PlayerID][]mineRead
	// sql: the record holds the database's reads (claims and items come
	// from them, not from the service's endpoints).
	sql bool
	// fair: the database's claim rows carry the wins each claim ranks with
	// (a fourth column), every one of them that was read (fairRows).
	fair bool
}

type mineRead struct {
	sent, done time.Duration
	intent     lootfaults.Intent // "" : no claim
}

// build reads the record's samples into rounds.
func build(w Workload, spec Spec, r Record) *builder {
	b := &builder{w: w, spec: spec, r: r}
	b.sql = slices.ContainsFunc(r.Samples, func(s Sample) bool { return s.Op == "sql-claims" })
	b.fair = b.sql && fairRows(r.Samples)
	n := len(w.Schedule.Sessions)
	b.sessions = make([][]round, n)
	b.deadline = make([]time.Duration, n)
	b.mine = make([]map[lootfaults.PlayerID][]mineRead, n)
	for x := range n {
		b.deadline[x] = w.wall(w.Schedule.Sessions[x].Deadline)
		b.mine[x] = map[lootfaults.PlayerID][]mineRead{}
	}
	type key struct{ x, round int }
	var order []key
	by := map[key][]Sample{}
	for _, s := range r.Samples {
		if s.Session < 0 || s.Session >= n {
			continue
		}
		k := key{s.Session, s.Round}
		if _, ok := by[k]; !ok {
			order = append(order, k)
		}
		by[k] = append(by[k], s)
	}
	slices.SortFunc(order, func(a, b key) int { return cmp.Or(cmp.Compare(a.x, b.x), cmp.Compare(a.round, b.round)) })
	deadlineSeen := make([]bool, n)
	for _, k := range order {
		rd, ok := b.round(k.x, by[k], &deadlineSeen[k.x])
		if !ok {
			continue
		}
		if rs := b.sessions[k.x]; len(rs) > 0 && rd.rec.Snapshot == nil && rd.rec.Status == lootfaults.Statuses.Closed {
			rd.rec.Snapshot = rs[len(rs)-1].rec.Snapshot // a result never changes: the last audit read stands
		}
		b.sessions[k.x] = append(b.sessions[k.x], rd)
		b.rounds++
	}
	return b
}

// round reads one round's samples; false when the round is incomplete (a
// read that failed: what it would have shown is not known).
func (b *builder) round(x int, ss []Sample, deadlineSeen *bool) (round, bool) {
	f := b.spec.Fields
	rd := round{sent: ss[0].Sent, done: ss[0].Done}
	var sqlClaims []lootfaults.Claim
	var sqlItems []item
	var reads []mineRead
	sessionRead, grantsRead := false, false
	for _, s := range ss {
		rd.sent, rd.done = min(rd.sent, s.Sent), max(rd.done, s.Done)
		switch {
		case s.Op == "session" && s.Status == http.StatusNotFound:
			rd.rec.Status = lootfaults.Statuses.None
		case s.Status != http.StatusOK && !(s.Op == "mine" && s.Status == http.StatusNotFound):
			return round{}, false
		case s.Op == "session":
			v := decodeJSON(s.Answer)
			st, ok := str(lookup(v, f["session.status"]))
			if !ok {
				return round{}, false
			}
			rd.rec.Status = lootfaults.Status(st)
			if d, ok := str(lookup(v, f["session.deadline"])); ok && !*deadlineSeen {
				if t, err := time.Parse(time.RFC3339Nano, d); err == nil {
					b.deadline[x], *deadlineSeen = t.Sub(b.r.Run.Started), true
				}
			}
			gs, _ := lookup(v, f["session.grants"]).([]any)
			for _, g := range gs {
				p, _ := str(lookup(g, f["grant.player"]))
				var id int64
				fmt.Sscan(p, &id)
				rd.rec.Granted = append(rd.rec.Granted, lootfaults.PlayerID(id))
				st, _ := str(lookup(g, f["grant.status"]))
				no, _ := str(lookup(g, f["grant.no"]))
				rd.grants = append(rd.grants, grantRow{no, lootfaults.PlayerID(id), st == f["grant.delivered"], "the service's session read"})
				if st == f["grant.delivered"] {
					rd.delivered = append(rd.delivered, item{lootfaults.PlayerID(id), no})
				}
			}
		case s.Op == "mine":
			m := mineRead{sent: s.Sent, done: s.Done}
			if s.Status == http.StatusOK {
				if c, ok := claimOf(f, lookup(decodeJSON(s.Answer), f["mine.claim"])); ok {
					rd.rec.Claims = append(rd.rec.Claims, c)
					m.intent = c.Intent
				}
			}
			if !b.sql {
				b.mine[x][lootfaults.PlayerID(s.Player)] = append(b.mine[x][lootfaults.PlayerID(s.Player)], m)
			}
		case s.Op == "sql-claims":
			sqlClaims = []lootfaults.Claim{}
			rows, _ := decodeJSON(s.Answer).([]any)
			for _, row := range rows {
				cols, _ := row.([]any)
				if len(cols) < 3 {
					return round{}, false
				}
				var c lootfaults.Claim
				p, _ := str(cols[0])
				in, _ := str(cols[1])
				at, _ := str(cols[2])
				var id int64
				fmt.Sscan(p, &id)
				c.Player, c.Intent = lootfaults.PlayerID(id), lootfaults.Intent(in)
				c.At, _ = b.spec.Time(at)
				if len(cols) >= 4 {
					w, _ := str(cols[3])
					fmt.Sscan(w, &c.Fair)
				}
				sqlClaims = append(sqlClaims, c)
			}
			for _, p := range b.w.Players(x) {
				m := mineRead{sent: s.Sent, done: s.Done}
				if i := slices.IndexFunc(sqlClaims, func(c lootfaults.Claim) bool { return c.Player == p }); i >= 0 {
					m.intent = sqlClaims[i].Intent
				}
				reads = append(reads, m)
			}
		case s.Op == "sql-session":
			rows, _ := decodeJSON(s.Answer).([]any)
			rd.rec.Status = lootfaults.Statuses.None
			if len(rows) > 0 {
				cols, _ := rows[0].([]any)
				if len(cols) < 2 {
					return round{}, false
				}
				st, _ := str(cols[0])
				rd.rec.Status = lootfaults.Status(st)
				if d, ok := str(cols[1]); ok && !*deadlineSeen {
					if t, ok := b.spec.Time(d); ok {
						b.deadline[x], *deadlineSeen = t.Sub(b.r.Run.Started), true
					}
				}
			}
			sessionRead = true
		case s.Op == "sql-grants":
			rows, ok := rowsOf(s.Answer, 3)
			if !ok {
				return round{}, false
			}
			for _, cols := range rows {
				it := itemOf(cols)
				rd.rec.Granted = append(rd.rec.Granted, it.player)
				st, _ := str(cols[2])
				rd.grants = append(rd.grants, grantRow{it.key, it.player, st == f["grant.delivered"], "the database's grant rows"})
				if st == f["grant.delivered"] && !b.sql {
					rd.delivered = append(rd.delivered, it)
				}
			}
			grantsRead = true
		case s.Op == "sql-items":
			sqlItems = []item{}
			rows, ok := rowsOf(s.Answer, 2)
			if !ok {
				return round{}, false
			}
			for _, cols := range rows {
				sqlItems = append(sqlItems, itemOf(cols))
			}
		case s.Op == "audit":
			v := decodeJSON(s.Answer)
			snap := &lootfaults.Snapshot{}
			cs, _ := lookup(v, f["audit.claims"]).([]any)
			for _, c := range cs {
				if cl, ok := claimOf(f, c); ok {
					snap.Claims = append(snap.Claims, cl)
				}
			}
			ws, _ := lookup(v, f["audit.winners"]).([]any)
			for _, p := range ws {
				s, _ := str(p)
				var id int64
				fmt.Sscan(s, &id)
				snap.Winners = append(snap.Winners, lootfaults.PlayerID(id))
			}
			rd.rec.Snapshot = snap
		}
	}
	if !b.spec.Has("session") && (!sessionRead || !grantsRead) {
		return round{}, false // the session's state is only in the database, not read whole this round
	}
	if b.sql {
		if sqlClaims == nil || sqlItems == nil {
			return round{}, false // the database was not read in this round
		}
		rd.rec.Claims, rd.delivered = sqlClaims, sqlItems
		for i, p := range b.w.Players(x) {
			b.mine[x][p] = append(b.mine[x][p], reads[i])
		}
	}
	slices.SortFunc(rd.rec.Claims, func(a, c lootfaults.Claim) int { return cmp.Compare(a.Player, c.Player) })
	return rd, true
}

// fairRows reports whether the claim rows the samples read carry their
// wins (a fourth column): every one has it. Rows without it (the default
// query's three columns) leave the wins unknown; a run that read no claim
// row at all ranked nothing, and its winners must be none whatever the
// wins.
func fairRows(ss []Sample) bool {
	for _, s := range ss {
		if s.Op != "sql-claims" || s.Status != http.StatusOK {
			continue
		}
		rows, _ := decodeJSON(s.Answer).([]any)
		for _, row := range rows {
			if cols, _ := row.([]any); len(cols) < 4 {
				return false
			}
		}
	}
	return true
}

// rowsOf reads a query's answer, rows of at least n columns (false: a row
// with fewer).
func rowsOf(answer string, n int) ([][]any, bool) {
	rows, _ := decodeJSON(answer).([]any)
	out := make([][]any, 0, len(rows))
	for _, row := range rows {
		cols, _ := row.([]any)
		if len(cols) < n {
			return nil, false
		}
		out = append(out, cols)
	}
	return out, true
}

// itemOf is a row's (grant number, player).
func itemOf(cols []any) item {
	no, _ := str(cols[0])
	p, _ := str(cols[1])
	var id int64
	fmt.Sscan(p, &id)
	return item{lootfaults.PlayerID(id), no}
}

// claimOf reads a claim object (false: null or not a claim).
func claimOf(f map[string]string, v any) (lootfaults.Claim, bool) {
	p, ok := str(lookup(v, f["claim.player"]))
	in, ok2 := str(lookup(v, f["claim.intent"]))
	if !ok || !ok2 {
		return lootfaults.Claim{}, false
	}
	var c lootfaults.Claim
	var id int64
	fmt.Sscan(p, &id)
	c.Player, c.Intent = lootfaults.PlayerID(id), lootfaults.Intent(in)
	if at, ok := str(lookup(v, f["claim.at"])); ok {
		if t, err := time.Parse(time.RFC3339Nano, at); err == nil {
			c.At = t // Replayable ranks by it: only its order matters
		}
	}
	if wins, ok := str(lookup(v, f["claim.wins"])); ok {
		fmt.Sscan(wins, &c.Fair)
	}
	return c, true
}

// history is the record as a lootfaults.History: the rounds placed early
// (at their last answer) or late (at the start of the round before), each
// session's deadline the recorded one moved by shift.
func (b *builder) history(early bool, shift time.Duration) lootfaults.History {
	s := lootfaults.World.Clone(b.w.Schedule)
	s.Fairness, s.CountWins = nil, false // the service's record is not the schedule's: wins come from the snapshot
	for x := range s.Sessions {
		s.Sessions[x].Deadline = b.deadline[x] + shift
	}
	type ev struct {
		at    time.Duration
		order int // among events at one instant: world events before the answers they explain
		e     lootfaults.Event
	}
	var evs []ev
	none := lootfaults.Detail{Session: -1}
	for _, ex := range b.r.Exchanges {
		evs = append(evs,
			ev{ex.Sent, 1, lootfaults.Event{At: ex.Sent, Kind: engine.EvArrive, Msg: ex.Request, Attempt: ex.Attempt, Node: ex.Target, Delivery: -1, Detail: none}},
			ev{ex.Done, 2, lootfaults.Event{At: ex.Done, Kind: engine.EvAck, Msg: ex.Request, Attempt: ex.Attempt, Node: ex.Target, Ack: ackOf(ex.Outcome), Err: ex.Err, Detail: none}})
	}
	for _, g := range b.r.GiveUps {
		evs = append(evs, ev{g.At, 3, lootfaults.Event{At: g.At, Kind: engine.EvGiveUp, Msg: g.Request, Attempt: -1, Err: g.Err, Detail: none}})
	}
	wins := map[lootfaults.PlayerID]int64{}
	for x, rs := range b.sessions {
		applied := map[string]bool{}
		frozen := false
		for k, rd := range rs {
			at := rd.done
			if !early {
				at = 0
				if k > 0 {
					at = rs[k-1].sent
				}
			}
			rec := rd.rec
			if !frozen && (rec.Status == lootfaults.Statuses.Settling || rec.Status == lootfaults.Statuses.Closed) {
				frozen = true
				// The wins the settle ranked by, as the snapshot reports
				// them (or the claim rows of this round), set just before
				// the freeze (lootprops ranks by History.WinsAt there).
				if ranked, ok := b.ranked(x, k); ok {
					for _, c := range ranked {
						if d := c.Fair - wins[c.Player]; d != 0 {
							wins[c.Player] = c.Fair
							evs = append(evs, ev{at, 0, lootfaults.Event{At: at, Kind: lootfaults.Events.Fair, Msg: -1, Attempt: -1, Detail: lootfaults.Detail{Session: x, Player: c.Player, Wins: d}}})
						}
					}
				}
			}
			evs = append(evs, ev{at, 0, lootfaults.Event{At: at, Kind: lootfaults.Events.View, Msg: -1, Attempt: -1, Detail: lootfaults.Detail{Session: x, Record: &rec}}})
			if b.r.Run.Inventory {
				continue // the ledger says what was delivered (below)
			}
			for _, it := range rd.delivered {
				if !applied[it.key] {
					applied[it.key] = true
					evs = append(evs, ev{at, 0, lootfaults.Event{At: at, Kind: lootfaults.Events.Item, Msg: -1, Attempt: -1, Op: lootfaults.Events.Deliver, Detail: lootfaults.Detail{Session: x, Player: it.player, Key: it.key, OK: true}}})
				}
			}
		}
	}
	for _, it := range b.ledgerItems() {
		evs = append(evs, ev{it.At, 0, it})
	}
	slices.SortStableFunc(evs, func(a, c ev) int { return cmp.Or(cmp.Compare(a.at, c.at), cmp.Compare(a.order, c.order)) })
	h := lootfaults.History{Design: "service", Schedule: s}
	for i, e := range evs {
		e.e.Seq = i
		h.Events = append(h.Events, e.e)
	}
	return h
}

// ledgerItems are the hosted inventory's applications as the loot
// world's item events, at the times the inventory took them: one per item
// applied (a delivery of quantity q is q items), by the session, player
// and item its body names, whatever its idempotency key. The inventory
// applies one key once, so a grant applied twice is a service that sent
// it under two keys; the grant number the protocol makes the key is
// sessionNo:playerId:lootCode, which the body carries whatever the key.
func (b *builder) ledgerItems() []lootfaults.Event {
	if !b.r.Run.Inventory {
		return nil
	}
	session := map[string]int{}
	for x := range b.w.Schedule.Sessions {
		session[b.w.SessionNo(x)] = x
	}
	var out []lootfaults.Event
	for _, d := range b.r.Ledger {
		x, ok := session[d.Session]
		if d.Outcome != inventory.Applied || !ok {
			continue
		}
		at := max(d.At.Sub(b.r.Run.Started), 0)
		for range max(d.Quantity, 1) {
			out = append(out, lootfaults.Event{At: at, Kind: lootfaults.Events.Item, Msg: -1, Attempt: -1, Op: lootfaults.Events.Deliver,
				Detail: lootfaults.Detail{Session: x, Player: lootfaults.PlayerID(d.Player), Key: d.Key, OK: true}})
		}
	}
	return out
}

// againstHow is what againstLedger adds to a property's account.
const againstHow = "the ledger checked against the grants the service's rows show: a grant shown delivered with no delivery of its number applied, a delivery applied under a number no grant row held"

// againstLedger sets the hosted inventory's ledger against the grants the
// rounds read (the service's session read or the database's grant rows):
// per property the disagreement breaks, one sentence naming the grant
// (nil when the harness hosted no inventory). The inventory protocol
// makes the idempotency key the grant number, so a grant shown delivered
// whose number the ledger never applied is an item the player never got
// though the service says it did (NoLostGrant; the winners' check misses
// it when the item came under another key, or the grant is not a
// winner's), and a delivery applied under a number the service never held
// is an item no grant accounts for (NoOverGrant; by session and player
// alone it can look like a winner's). A grant read without a number
// cannot be named, and is left to the properties' own checks.
func (b *builder) againstLedger() map[engine.Property][]string {
	if !b.r.Run.Inventory {
		return nil
	}
	applied := map[string]bool{}
	for _, d := range b.r.Ledger {
		if d.Outcome == inventory.Applied {
			applied[d.Key] = true
		}
	}
	lost, over := []string{}, []string{}
	delivered := b.spec.Fields["grant.delivered"]
	held := make([]map[string]bool, len(b.sessions))
	for x, rs := range b.sessions {
		held[x] = map[string]bool{}
		said := map[string]bool{}
		for _, rd := range rs {
			for _, g := range rd.grants {
				if g.no == "" {
					continue
				}
				held[x][g.no] = true
				if !g.delivered || said[g.no] || applied[g.no] {
					continue
				}
				said[g.no] = true
				lost = append(lost, fmt.Sprintf("%s: grant %s (player %d) is %s in %s, and the hosted inventory applied no delivery of that grant number", b.w.SessionNo(x), g.no, g.player, delivered, g.from))
			}
		}
	}
	session := map[string]int{}
	for x := range b.w.Schedule.Sessions {
		session[b.w.SessionNo(x)] = x
	}
	// A session is checked by grant number only where the service keys
	// its deliveries by it: some delivery applied for the session under a
	// number its rows held. A service that keys them its own way (a hash
	// of the number, a prefix) and delivers the right items once each is
	// correct, and is judged by the items alone (by session, player and
	// item, above); a grant it never delivered shows there as lost.
	keyed := make([]bool, len(b.sessions))
	for _, d := range b.r.Ledger {
		if x, ok := session[d.Session]; ok && d.Outcome == inventory.Applied && held[x][d.Key] {
			keyed[x] = true
		}
	}
	lost = slices.DeleteFunc(lost, func(l string) bool {
		for x, k := range keyed {
			if !k && strings.HasPrefix(l, b.w.SessionNo(x)+": ") {
				return true
			}
		}
		return false
	})
	for _, d := range b.r.Ledger {
		x, ok := session[d.Session]
		if d.Outcome != inventory.Applied || !ok || !keyed[x] || held[x][d.Key] {
			continue
		}
		nos := slices.Sorted(maps.Keys(held[x]))
		over = append(over, fmt.Sprintf("%s: the hosted inventory applied a delivery to player %d under grant number %s, which the service's rows never held (they held %v)", b.w.SessionNo(x), d.Player, d.Key, nos))
	}
	return map[engine.Property][]string{lootfaults.Properties.NoLostGrant: lost, lootfaults.Properties.NoOverGrant: over}
}

// itemsHow says where the judge read deliveries from: the hosted
// inventory's ledger when the harness hosted it (and what it did not use
// beside it), else the database's inventory rows, else the service's own
// session read.
func (b *builder) itemsHow() string {
	if !b.r.Run.Inventory {
		if b.sql {
			return "from the deliveries the database's inventory rows record (the spec's sql items query)"
		}
		return "from the grant rows the session read shows delivered (the inventory's own record needs the database or the harness's inventory)"
	}
	how := "from the deliveries in the hosted inventory's ledger (the items it applied), by session, player and item whatever the idempotency key"
	if b.sql {
		return how + "; the database's inventory rows were read and not used for them"
	}
	return how + "; the grants the service shows delivered were not used for them"
}

// ackOf is an outcome as the loot world's answer.
func ackOf(o Outcome) engine.Ack {
	switch o {
	case Accepted:
		return lootfaults.Accepted
	case Already:
		return lootfaults.Already
	case Refused:
		return lootfaults.Refused
	case Noted:
		return lootfaults.Noted
	case Recorded:
		return lootfaults.Recorded
	}
	return engine.Nack
}

// absent says why property p is not judged because the service lacks an
// operation ("" if it is not): what only that operation shows is not
// seen, and a property judged on nothing would be reported held. fair:
// the database's claim rows carry their wins, which stand in for the
// audit's for RuleOrder (its winners are then the grants).
func absent(spec Spec, sql, fair bool, p engine.Property) string {
	switch {
	case !spec.Has("audit") && p == lootfaults.Properties.Replayable:
		return "the service has no audit read: no record of what a settle ranked (its snapshot and rule version) is there to replay"
	case !spec.Has("audit") && !fair && p == lootfaults.Properties.RuleOrder:
		return "the service has no audit read and the database's claim rows (the spec's sql claims query) carry no wins column: the wins each claim was ranked with are not shown, so the rule's order cannot be recomputed"
	case !spec.Has("mine") && !sql && p == lootfaults.Properties.MembersOnly:
		return "the service has no read of a player's claim and the database was not read: an outsider's claim is not seen"
	case !spec.Has("mine") && !sql && p == lootfaults.Properties.HonestAnswer:
		return "the service has no read of a player's claim and the database was not read: what an accepted claim did is not seen"
	}
	return ""
}

// unread says why the record cannot be judged at all ("" if it can): a
// session the workload opens with no complete sampling round, whose state
// was therefore never seen (every property would hold on nothing).
func (b *builder) unread() string {
	for x, rs := range b.sessions {
		if len(rs) > 0 || !slices.ContainsFunc(b.w.Sends, func(s Send) bool {
			r := b.w.Schedule.Requests[s.Request]
			return r.Session == x && r.Kind == lootfaults.Kinds.OpenSession
		}) {
			continue
		}
		why := "no read answered"
		for _, s := range b.r.Samples {
			if s.Session == x && (s.Err != "" || (s.Status != http.StatusOK && s.Status != http.StatusNotFound)) {
				why = fmt.Sprintf("its %s read failed: %d %s", s.Op, s.Status, s.Err+s.Answer)
				break
			}
		}
		return fmt.Sprintf("%s was never read whole in a sampling round (%s)", b.w.SessionNo(x), strings.TrimSpace(why))
	}
	return ""
}

// cannot says why property p cannot be judged on this record ("" if it
// can).
func (b *builder) cannot(p engine.Property) string {
	switch p {
	case lootfaults.Properties.RuleOrder:
		for x, rs := range b.sessions {
			if len(rs) == 0 || rs[len(rs)-1].rec.Status != lootfaults.Statuses.Closed {
				continue
			}
			if _, ok := b.ranked(x, len(rs)-1); !ok {
				return fmt.Sprintf("%s closed with no audit snapshot read: the wins it ranked by are not known", b.w.SessionNo(x))
			}
			if a, c, ok := b.unordered(x); ok {
				return fmt.Sprintf("%s: players %d and %d claimed with equal priority and wins, and the samples cannot order their claims", b.w.SessionNo(x), a, c)
			}
		}
	case lootfaults.Properties.HonestAnswer:
		for x := range b.w.Schedule.Sessions {
			intents := map[lootfaults.PlayerID]lootfaults.Intent{}
			for _, r := range b.w.Schedule.Requests {
				if r.Kind != lootfaults.Kinds.ClaimItem || r.Session != x {
					continue
				}
				if in, ok := intents[r.Player]; ok && in != r.Intent {
					return fmt.Sprintf("player %d changes its claim in %s: a read after an answer may show the next change, so an answer cannot be checked against it", r.Player, b.w.SessionNo(x))
				}
				intents[r.Player] = r.Intent
			}
		}
	}
	return ""
}

// tied reports whether two claims the samples cannot order are a tie by
// every account, which the rule breaks by the lowest id: one read showed
// both first (sameRead: the history dates them alike) and the service
// recorded them at one time (its claim times, as the audit or the claim
// rows give them: a service recording whole seconds ranks two claims of
// one second as simultaneous, and must then rank the lower id first).
func tied(a, c lootfaults.Claim, sameRead bool) bool {
	return sameRead && !a.At.IsZero() && a.At.Equal(c.At)
}

// ranked are the claims session x's settle ranked, with their wins, as
// round k can tell: the last audit snapshot's, or, without an audit read,
// the claim rows round k read when they carry their wins (b.fair); false
// when neither is there.
func (b *builder) ranked(x, k int) ([]lootfaults.Claim, bool) {
	rs := b.sessions[x]
	if snap := rs[len(rs)-1].rec.Snapshot; snap != nil {
		return snap.Claims, true
	}
	if b.fair && !b.spec.Has("audit") {
		return rs[k].rec.Claims, true
	}
	return nil, false
}

// unordered finds two frozen claims of session x that rank by their times
// (equal priority, equal wins in the snapshot) and whose writes the
// samples cannot order: the interval each was written in (after the last
// read of its player that did not show its intent began, by the end of the
// first that did) overlaps the other's, and they are not tied.
func (b *builder) unordered(x int) (lootfaults.PlayerID, lootfaults.PlayerID, bool) {
	rs := b.sessions[x]
	ranked, _ := b.ranked(x, len(rs)-1)
	// A claim was written after the instant its last read not showing it
	// read (lo, that read's sent and done) and by the instant the first
	// showing it read (hi): a read reads at one instant between its
	// sending and its answer.
	type read struct{ sent, done time.Duration }
	type span struct {
		c      lootfaults.Claim
		lo, hi read
	}
	// before: a was surely written before c: a's first showing read is c's
	// last not showing it (one read of both: the database's claim rows),
	// or was answered before that one was sent.
	before := func(a, c span) bool { return a.hi == c.lo || a.hi.done <= c.lo.sent }
	var spans []span
	for _, c := range ranked {
		if c.Intent.Priority() == 0 || !b.w.Schedule.MemberOf(x, c.Player) {
			continue
		}
		reads := b.mine[x][c.Player]
		sp := span{c: c, hi: read{-1, -1}}
		for _, m := range reads {
			if m.intent != c.Intent {
				sp.lo, sp.hi = read{m.sent, m.done}, read{-1, -1}
			} else if sp.hi.done < 0 {
				sp.hi = read{m.sent, m.done}
			}
		}
		if sp.hi.done < 0 {
			sp.hi = read{b.r.End, b.r.End} // never seen by its player's reads: any time
		}
		spans = append(spans, sp)
	}
	for i, a := range spans {
		for _, c := range spans[i+1:] {
			if a.c.Intent.Priority() == c.c.Intent.Priority() && a.c.Fair == c.c.Fair && !before(a, c) && !before(c, a) && !tied(a.c, c.c, a.hi == c.hi) {
				return a.c.Player, c.c.Player, true
			}
		}
	}
	return 0, 0, false
}
