package lootprops

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/onceproof/onceproof/engine"
	lootfaults "github.com/onceproof/onceproof/faults/loot"
)

// World is the loot subject as the engine runs it: lootfaults.World
// (families, schedules, runner and coverage) with this package's
// properties (Judge, Describe), cell sizes (Runs) and renderings.
var World = func() engine.World[lootfaults.Design, lootfaults.Schedule, lootfaults.Detail] {
	w := lootfaults.World
	w.Runs = runs
	w.Judge = func(h engine.History[lootfaults.Schedule, lootfaults.Detail]) engine.Report {
		return Judge(lootfaults.History(h))
	}
	w.Describe = Describe
	w.GroundTruth = groundTruth
	w.EventText = eventText
	w.Participants = participants
	w.MermaidLine = mermaidLine
	return w.Complete()
}()

// The matrix's types, for loot designs (see package engine).
type (
	MatrixOptions  = engine.MatrixOptions[lootfaults.Design]
	Matrix         = engine.Matrix[lootfaults.Schedule, lootfaults.Detail]
	Row            = engine.Row[lootfaults.Schedule, lootfaults.Detail]
	Cell           = engine.Cell[lootfaults.Schedule, lootfaults.Detail]
	Counterexample = engine.Counterexample[lootfaults.Schedule, lootfaults.Detail]
	SchedFile      = engine.SchedFile[lootfaults.Schedule]
)

// RunMatrix runs every design under every loot family (engine.RunMatrix).
func RunMatrix(opt MatrixOptions) Matrix { return engine.RunMatrix(World, opt) }

// TestDesign judges loot design d under every loot family, as the matrix
// does, with the options (and the saved failures, replays and report) of
// engine.TestDesign: the kit settlement designs get from props.TestDesign,
// and the same options (engine.Families, engine.Schedules, ...; props'
// are the same functions).
func TestDesign(t *testing.T, d lootfaults.Design, opts ...engine.Option) {
	t.Helper()
	engine.TestDesign(t, World, d, opts...)
}

// DefaultN is how many schedules a loot cell runs (World.Runs) when the
// matrix asks for engine.DefaultMatrixN: a half. A loot run is a few
// times a settlement run (every store call is read back for the audit),
// its families are narrower (each draws one feature around one or two
// sessions), and the whole loot matrix must stay within half of `make
// proofs`' minute on 2 cores beside the settlement one's.
const DefaultN = engine.DefaultMatrixN / 2

// Why DeepN is 3000: a run of a family of rare failures fails only when the
// scheduling choices (or the clock offsets) line up with the requests:
//   - lock-only's settle answered accepted while a second settler has
//     already written SETTLING over the CLOSED session (concurrent-settle,
//     HonestAnswer) needs the second settler to take the lock in the one
//     step between the first's unlock and its answer, and to write before
//     that answer: about 9 choices fixed between 2 goroutines, p ~ 2^-9 ~
//     0.002 a run (8 of 4000 seeds, counted with `onceproof matrix`).
//   - loot-seed-verbatim's unreplayable ranking under clock-skew needs two
//     claims of equal priority and fairness that the nodes' clocks stamp
//     into one recorded second: 11 of 8000 seeds, p ~ 0.0014.
//
// n runs miss a failure of probability p with probability (1-p)^n: 3000
// runs miss the first with 0.25%, the second with 1.5% (at DefaultN, 100
// runs, 82% and 87%). Those are the rarest failures 4000 runs a cell find
// in the whole loot matrix (`onceproof matrix -subject loot -n 8000`);
// the cost is about 20 s of `make proofs` on 2 cores. Lower it only with
// a generator that finds these more often, measured the same way.

// DeepN is how many schedules a loot cell runs, when the matrix asks for
// engine.DefaultMatrixN, under a family whose known failures are rare per
// run (Deep: one that interleaves requests at one instant, and
// clock-skew): enough that each of those known failures shows in a cell
// with probability above 98%.
const DeepN = 30 * DefaultN

// Why JoinN is 4 DefaultN: a join's features pick among each other's
// requests, so a part's failure shows in fewer of the join's runs than of
// the part's own: lock-expiry stalls one of a session's settle
// deliveries, which under early-settle+lock-expiry are 1..2 early
// triggers beside the scheduler's, and a trigger stalled before the
// deadline is refused when it wakes by a design that judges the deadline
// then. select-then-update's ForwardOnly (a settler stalled between its
// SELECT and its UPDATE at the deadline) fails 35 of 1000 lock-expiry
// seeds and 9 of 1000 of the join's, a quarter; the join's own failure
// in this package's tests (freezes-at-trigger's FrozenClaims: an early
// trigger stalled between its lock and its freeze, the second trigger
// stalled too, a claim between the two) 18 of 1000. 400 runs miss p =
// 0.009 with (1-p)^400 = 2.7%, and 0.018 with 0.07% (at DefaultN, 40% and
// 16%). A join with a part of rare failures (Deep) runs DeepN, which is
// more.

// JoinN is how many schedules a loot cell of a joined family runs when
// the matrix asks for engine.DefaultMatrixN (DeepN if a part's failures
// are rare).
const JoinN = 4 * DefaultN

// Runs is n scaled by DefaultN/DefaultMatrixN, or by DeepN/DefaultMatrixN
// under a family of rare failures, or by JoinN/DefaultMatrixN under
// another joined family (at least 1): a cell of the default matrix runs
// DefaultN, DeepN or JoinN schedules.
func runs(f engine.Family, n int) int {
	switch {
	case Deep(f):
		return max(1, n*DeepN/engine.DefaultMatrixN)
	case len(f.Parts()) > 1:
		return max(1, n*JoinN/engine.DefaultMatrixN)
	}
	return max(1, n*DefaultN/engine.DefaultMatrixN)
}

// Deep reports whether family f's cells run DeepN schedules by default.
func Deep(f engine.Family) bool {
	return lootfaults.Interleaves(f) || slices.Contains(f.Parts(), lootfaults.Families.ClockSkew)
}

// propertyDocs is the one-line meaning of each property, for matrix.md.
var propertyDocs = map[engine.Property]string{
	lootfaults.Properties.NoOverGrant:  "a session delivers at most its quantity, nothing once canceled, nothing to a player without a winning claim in the frozen set",
	lootfaults.Properties.NoDupGrant:   "no player gets a session's item twice",
	lootfaults.Properties.NoLostGrant:  "after the drain every session that took claims is CLOSED or CANCELED, every winner holds its item, and no request a patient sender kept resending went unanswered",
	lootfaults.Properties.FrozenClaims: "a claim answered accepted before the freeze is in the set the result came from (a PASS may be left out: it never wins); none is answered so after it",
	lootfaults.Properties.RuleOrder:    "the winners are the rule's top N of the frozen claims (priority, fewest wins, earliest claim of the current intent, lowest id)",
	lootfaults.Properties.Replayable:   "the recorded evidence (the valid claims, NEED and GREED, as the source's 4.6 lists; PASS rows optional) replays to the recorded winners, which are the grants, from the claims that froze",
	lootfaults.Properties.MembersOnly:  "no claim of a player outside the team snapshot is recorded",
	lootfaults.Properties.OnTime:       "no session starts settling before its deadline by the database's clock",
	lootfaults.Properties.InWindow:     "a claim is answered accepted, or freezes into the claim set, only if its row was written before the deadline by the database's clock",
	lootfaults.Properties.ForwardOnly:  "every status change follows the table: forward (several edges in one atomic write, as CLAIMING -> CLOSED), CANCELED before CLOSED, never back",
	lootfaults.Properties.HonestAnswer: "a reply says accepted, already or recorded only when the database (and the inventory) say so, and refused only when the rules say no (an open, or a member's claim on a CLAIMING session, before the deadline by the database's clock is never refused, nor answered noted without taking effect)",
	lootfaults.Properties.Responsive:   "every Handle and Recover returns and nothing of the design outlives the run: no panic, no deadlock, no stall (the watchdogs end a run that stops moving), no goroutine left running (seen in TestDesign's bubbles)",
}

// Describe is property p's one-line meaning.
func Describe(p engine.Property) string {
	if d, ok := propertyDocs[p]; ok {
		return d
	}
	return "not a property"
}

// The loot world's part of the renderings (World's GroundTruth,
// EventText, Participants, MermaidLine).

func groundTruth(h engine.History[lootfaults.Schedule, lootfaults.Detail]) string {
	s := h.Schedule
	var b strings.Builder
	fmt.Fprintf(&b, "team %v", s.Team)
	if len(s.Fairness) > 0 {
		b.WriteString(", wins:")
		for _, f := range s.Fairness {
			fmt.Fprintf(&b, " %d=%d", f.Player, f.Wins)
		}
	}
	for n := range s.Nodes {
		if d := s.Skew(n); d != 0 {
			fmt.Fprintf(&b, ", node %d's clock %+v", n, d)
		}
	}
	if s.LockSkew != 0 {
		fmt.Fprintf(&b, ", lock clock %+v", s.LockSkew)
	}
	b.WriteString("\nsessions:\n")
	if s.CountWins {
		b.WriteString("(every item applied counts as its player's win)\n")
	}
	for _, x := range s.Sessions {
		fmt.Fprintf(&b, "  x%-3d %d item(s), deadline %s", x.ID, x.Quantity, x.Deadline)
		if x.Code != "" {
			fmt.Fprintf(&b, ", loot %s", x.Code)
		}
		if x.Members != nil {
			fmt.Fprintf(&b, ", team %v", x.Members)
		}
		for _, f := range x.Bumps {
			fmt.Fprintf(&b, ", at its freeze player %d +%d wins", f.Player, f.Wins)
		}
		b.WriteByte('\n')
	}
	b.WriteString("requests:\n")
	for _, r := range s.Requests {
		fmt.Fprintf(&b, "  %s\n", describe(lootfaults.History(h), r.ID))
	}
	return b.String()
}

func eventText(_ engine.History[lootfaults.Schedule, lootfaults.Detail], e lootfaults.Event) string {
	d := e.Detail
	errs := ""
	if e.Err != "" {
		errs = " (error: " + e.Err + ")"
	}
	switch e.Kind {
	case lootfaults.Events.View:
		return fmt.Sprintf("x%d is %s", d.Session, recordText(*d.Record))
	case lootfaults.Events.Item:
		res := "no-op (key already applied)"
		if d.OK {
			res = "applied"
		}
		return fmt.Sprintf("x%d's item to player %d, key %s: %s%s", d.Session, d.Player, d.Key, res, errs)
	case lootfaults.Events.Fair:
		return fmt.Sprintf("player %d's fairness record +%d wins (x%d froze)", d.Player, d.Wins, d.Session)
	case lootfaults.Events.Lock:
		switch e.Op {
		case lootfaults.Events.LockGet:
			return fmt.Sprintf("%s %s -> %q", e.Op, d.Key, d.Value)
		case lootfaults.Events.LockDel:
			return fmt.Sprintf("%s %s (deleted: %t)", e.Op, d.Key, d.OK)
		}
		return fmt.Sprintf("%s %s token %s: %t", e.Op, d.Key, short(d.Token), d.OK)
	}
	return lootfaults.World.KindName(e.Kind)
}

// short is a lock token's last 8 characters: tokens differ at their end.
func short(token string) string { return token[max(0, len(token)-8):] }

// recordText is a session record in one line.
func recordText(r lootfaults.Record) string {
	if r.Status == lootfaults.Statuses.None {
		return "not on record"
	}
	s := string(r.Status) + ", claims " + claimList(r.Claims)
	if len(r.Granted) > 0 {
		s += fmt.Sprintf(", granted %v", r.Granted)
	}
	if r.Snapshot != nil {
		s += fmt.Sprintf(", snapshot winners %v", r.Snapshot.Winners)
	}
	for _, o := range r.Others {
		s += "; and another record: " + recordText(o)
	}
	return s
}

func participants() string {
	return "    participant D as Database\n    participant K as Lock service\n    participant I as Inventory\n"
}

func mermaidLine(h engine.History[lootfaults.Schedule, lootfaults.Detail], e lootfaults.Event) string {
	n := fmt.Sprintf("N%d", e.Node)
	switch e.Kind {
	case lootfaults.Events.Item:
		return fmt.Sprintf("%s->>I: %s", n, eventText(h, e))
	case lootfaults.Events.Lock:
		return fmt.Sprintf("%s->>K: %s", n, eventText(h, e))
	}
	return fmt.Sprintf("Note over D: %s", eventText(h, e))
}

// Timeline renders h as text (engine.Timeline).
func Timeline(h lootfaults.History, r engine.Report) string {
	return engine.Timeline(World, engine.History[lootfaults.Schedule, lootfaults.Detail](h), r)
}
