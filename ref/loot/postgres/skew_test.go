package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/onceproof/onceproof/ref/loot"
	"github.com/onceproof/onceproof/ref/loot/postgres"
)

// skew is how far the two nodes' clocks are off the database's: minutes,
// as a node whose NTP died drifts, far beyond every window and lease.
const skew = 3 * time.Minute

// TestSkewedNodeClocksChangeNothing: two node processes whose clocks are
// minutes off act on one session by their own clocks, as a careless
// server would: the node 3 minutes ahead settles as soon as it starts
// (its clock says the deadline passed long ago), the node 3 minutes
// behind keeps claiming (its clock says claiming has minutes to go). The
// Service takes no node clock, so the database alone judges: every early
// Settle is ErrNotDue and exactly one succeeds, at or after the deadline;
// claims are taken until the deadline and refused after it; the frozen
// claims are each player's last accepted one, all timed before the
// deadline. A deadline a node computes from its own clock is judged by the
// database too: 30s ahead of a clock 3 minutes behind is in the past.
func TestSkewedNodeClocksChangeNothing(t *testing.T) {
	w := newWorld(t, false)
	members := team(3)
	// A deadline a minute away while the nodes start (however slowly the
	// shared machine starts them), brought in to a second away once both
	// are at work: the nodes read it at their start, and by their clocks it
	// is long past (ahead) or minutes away (behind) either way.
	spec := loot.Spec{No: "S-1", Dungeon: "ABYSS-3", Loot: "L-S-1", Quantity: 1, Deadline: w.now().Add(time.Minute),
		Rule: loot.RuleSeeded, Members: members}
	if _, _, err := w.st.Open(t.Context(), spec); err != nil {
		t.Fatal(err)
	}
	if _, err := w.st.StartClaiming(t.Context(), "S-1"); err != nil {
		t.Fatal(err)
	}
	ahead, behind := w.cfg("skew-settle", "S-1"), w.cfg("skew-claim", "S-1")
	ahead.Skew, behind.Skew = skew, -skew
	ca, cb := startChild(t, ahead), startChild(t, behind)
	ca.waitLine("open ")
	cb.waitLine("open ")
	w.dueIn("S-1", time.Second)
	settler, claimer := ca.finish(), cb.finish()

	got := report(t, settler)
	if got["open"] != "ok" || got["settle"] != "ok" || atoi(t, got["not-due"]) == 0 {
		t.Errorf("the node ahead: %v; want its own Open accepted, Settle refused ErrNotDue before the deadline, then ok", got)
	}
	rep := report(t, claimer)
	if rep["open"] != "bad argument" || atoi(t, rep["accepted"]) == 0 || atoi(t, rep["closed"]) == 0 {
		t.Errorf("the node behind: %v; want its own Open refused (its deadline is in the database's past), claims accepted, then refused", rep)
	}
	ctx := t.Context()
	if _, err := w.st.Session(ctx, "SKEW-BEHIND"); !errors.Is(err, loot.ErrNotFound) {
		t.Errorf("the session the node behind opened with a deadline in the past exists (%v)", err)
	}
	sess, err := w.st.Session(ctx, "S-1")
	if err != nil {
		t.Fatal(err)
	}
	if casAt := sess.SettleUntil.Add(-ahead.Lease); casAt.Before(sess.Deadline) {
		t.Errorf("the CAS ran at %v (database clock), before the deadline %v", casAt, sess.Deadline)
	}
	snap, err := w.st.Snapshot(ctx, "S-1")
	if err != nil {
		t.Fatal(err)
	}
	claims, err := w.st.Claims(ctx, "S-1")
	if err != nil {
		t.Fatal(err)
	}
	frozen := make([]loot.Claim, len(snap.Claims))
	for i, c := range snap.Claims {
		frozen[i] = c.Claim
		if !c.At.Before(sess.Deadline) {
			t.Errorf("player %d's claim at %v, not before the deadline %v", c.Player, c.At, sess.Deadline)
		}
		if want := rep[fmt.Sprintf("last-%d", c.Player)]; string(c.Intent) != want {
			t.Errorf("player %d: frozen %s, last accepted %q", c.Player, c.Intent, want)
		}
	}
	if d := cmp.Diff(claims, frozen); d != "" {
		t.Errorf("claims changed after the CAS froze them (-on record +frozen):\n%s", d)
	}
	w.checkExactlyOnce("S-1", 1)
}

// skewSettle is the node ahead: it opens a session "2.5 minutes ago plus
// 3 minutes" by its clock (30s ahead of the database, accepted), then
// settles cfg.Sessions[0] the moment its clock says the deadline passed,
// retrying every ErrNotDue.
func skewSettle(ctx context.Context, svc *loot.Service, st *postgres.Store, cfg childConfig) error {
	nodeNow := func() time.Time { return time.Now().Add(cfg.Skew) }
	no := cfg.Sessions[0]
	sess, err := st.Session(ctx, no)
	if err != nil {
		return err
	}
	_, err = svc.Open(ctx, loot.Spec{No: "SKEW-AHEAD", Dungeon: "D", Loot: "L", Quantity: 1, Deadline: nodeNow().Add(-cfg.Skew + 30*time.Second),
		Rule: loot.RuleCount, Members: []loot.PlayerID{1}})
	say("open %s", errName(err))
	notDue := 0
	for end := time.Now().Add(cfg.For); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if nodeNow().Before(sess.Deadline) {
			continue // never, 3 minutes ahead
		}
		_, err := svc.Settle(ctx, no)
		if errors.Is(err, loot.ErrNotDue) {
			notDue++
			continue
		}
		say("not-due %d", notDue)
		say("settle %s", errName(err))
		return nil
	}
	return fmt.Errorf("no Settle of %s succeeded in %v", no, cfg.For)
}

// skewClaim is the node behind: it opens a session 30s ahead by its clock
// (in the database's past: refused), then has every member claim in turn,
// NEED and GREED alternately, while its clock says the deadline is ahead
// (throughout), until it has seen claims refused for a while.
func skewClaim(ctx context.Context, svc *loot.Service, st *postgres.Store, cfg childConfig) error {
	nodeNow := func() time.Time { return time.Now().Add(cfg.Skew) }
	no := cfg.Sessions[0]
	sess, err := st.Session(ctx, no)
	if err != nil {
		return err
	}
	_, err = svc.Open(ctx, loot.Spec{No: "SKEW-BEHIND", Dungeon: "D", Loot: "L", Quantity: 1, Deadline: nodeNow().Add(30 * time.Second),
		Rule: loot.RuleCount, Members: []loot.PlayerID{1}})
	say("open %s", errName(err))
	accepted, closed := 0, 0
	last := map[loot.PlayerID]loot.Intent{}
	for n := 0; closed < 20; n++ {
		if !nodeNow().Before(sess.Deadline) {
			return fmt.Errorf("the node's clock passed the deadline: the test's skew is too small")
		}
		p := sess.Members[n%len(sess.Members)]
		in := []loot.Intent{loot.Need, loot.Greed}[n/len(sess.Members)%2]
		_, err := svc.Claim(ctx, loot.Caller{Player: p}, loot.ClaimRequest{Session: no, Intent: in})
		switch {
		case err == nil:
			accepted++
			last[p] = in
		case errors.Is(err, loot.ErrClaimsClosed):
			closed++
		default:
			return err
		}
		time.Sleep(5 * time.Millisecond)
	}
	say("accepted %d", accepted)
	say("closed %d", closed)
	for p, in := range last {
		say("last-%d %s", p, in)
	}
	return nil
}

// report reads a child's "key value" lines.
func report(t *testing.T, lines []string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, l := range lines {
		if k, v, ok := strings.Cut(l, " "); ok {
			out[k] = v
		}
	}
	return out
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return n
}
