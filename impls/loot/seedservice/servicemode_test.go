package seedservice

import (
	"maps"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/onceproof/onceproof/engine"
	lootfaults "github.com/onceproof/onceproof/faults/loot"
	lootservice "github.com/onceproof/onceproof/props/loot/service"
)

// seedSpec is seed.spec, parsed.
func seedSpec(t *testing.T) lootservice.Spec {
	t.Helper()
	text, err := os.ReadFile("seed.spec")
	if err != nil {
		t.Fatal(err)
	}
	s, err := lootservice.ParseSpec("seed.spec", string(text))
	if err != nil {
		t.Fatalf("%v\nTo reproduce: go test ./impls/loot/seedservice -run TestSeedSpecParses", err)
	}
	return s
}

// TestSeedSpecParses: seed.spec describes the service as this README
// does: no start, no read endpoints, its tables read in Shanghai's zone.
func TestSeedSpecParses(t *testing.T) {
	s := seedSpec(t)
	for _, op := range lootservice.Optional {
		if s.Has(op) {
			t.Errorf("seed.spec gives %s, which the service has not\nTo reproduce: go test ./impls/loot/seedservice -run TestSeedSpecParses", op)
		}
	}
	if s.Zone.String() != zone {
		t.Errorf("seed.spec's zone %s, the service's loot.time-zone %s\nTo reproduce: go test ./impls/loot/seedservice -run TestSeedSpecParses", s.Zone, zone)
	}
	if _, err := s.Queries("mysql"); err != nil {
		t.Error(err)
	}
}

// The document's defects service mode finds, each with its committed
// record (testdata/): a replay of it against a fresh fleet must fail
// exactly what it failed.
var (
	// outsider: the outsider's NEED is recorded (MembersOnly: the
	// document's submitIntent checks no membership) and, the only NEED,
	// wins the one item (NoOverGrant: delivered to a player with no
	// winning claim among the members'; RuleOrder, judged from the claim
	// rows' fair_score: the winner is not the rule's over the members'
	// claims, as the loot-seed-verbatim row's outsider counterexample
	// says).
	outsiderDefect = defect{Name: "outsider", Family: lootfaults.Families.Outsider, Seed: 1,
		Want: []engine.Property{lootfaults.Properties.MembersOnly, lootfaults.Properties.NoOverGrant, lootfaults.Properties.RuleOrder}}
	// stuck-settle: the instance a settle runs on is killed -9 between
	// lockForSettle and markClosed; the sender's retry on the other
	// instance finds the session SETTLING (lockForSettle matches only
	// CLAIMING) and nothing else ever moves it: the session is never
	// CLOSED (NoLostGrant, as the kit's crash cell). Crash seed 3: one
	// session, a GREED, the settle sent twice to two instances, the
	// second 2.5 s after the first (5 s of schedule time): with a settle
	// lock of 1 s the dead settler's lock has expired by then, so it is
	// lockForSettle's refusal that the second meets, not the lock.
	stuckSettleDefect = defect{Name: "stuck-settle", Family: lootfaults.Families.Crash, Seed: 3, Instances: 2,
		Plan: killMidSettle, SlowDB: slowDB, Args: []string{"--loot.settle.lock-expire-millis=1000"},
		Want: []engine.Property{lootfaults.Properties.NoLostGrant}}
	// cancel-race: a cancel sent 50 ms after the settle, to the same
	// instance, lands between lockForSettle and markClosed (SETTLING ->
	// CANCELED is on the document's table); the settler, which never
	// reads the status again, writes its PENDING grant and the
	// compensation job delivers the item of a canceled session
	// (NoOverGrant, as the kit's cancel-race cell). Cancel-race seed 62:
	// x0 settled at 10 s and canceled at 10.1 s (schedule time) on one
	// node, and a second session opened at 20 s, so the run goes on long
	// after x0's race and the drain sees the compensation's delivery.
	// Through a database slowDB (200 ms) away each way: the pool hands
	// out its most recently returned connection and pings one idle for
	// over 500 ms (p = 0 or 400 ms first), so the settle's lockForSettle
	// runs p+200 ms after its send and its markClosed four round trips
	// later, at p+1400. The cancel, sent 50 ms later (100 ms of schedule
	// time at recordScale), takes the next connection down the stack,
	// idle since the warm-up and so pinged: it runs at 50+400+200 =
	// 650 ms, inside the gap for either p. (With a direct database the
	// gap is a few ms and the cancel, 50 ms behind, mostly finds x0
	// CLOSED: 1 of 3 runs so, on a machine loaded 12 times over, still
	// failed.)
	// ties: selectRanked orders a NEED's claims by created_at, whole
	// seconds, and leaves two claims of one second in MariaDB's order,
	// not the earlier claim first (RuleOrder, judged from the claim rows'
	// fair_score with the grants as the winners; the kit's ties cell).
	// Ties seed 2 on two instances. Whether the two claims land in one
	// second is timing: it showed in about half the runs (2 of 6 and 3 of
	// 5 in two campaigns), so 10 tries miss it with p ~ 0.5^10 ~ 0.1%.
	tiesDefect = defect{Name: "ties", Family: lootfaults.Families.Ties, Seed: 2, Instances: 2, Reruns: 10,
		Want: []engine.Property{lootfaults.Properties.RuleOrder}}
	// late-claim: submitIntent reads the session's status and deadline,
	// judges the deadline by the JVM's clock, and only then upserts: a
	// claim that passes the check just before the deadline writes its
	// row after it (InWindow, as the kit's loot-seed-verbatim row; not
	// its FrozenClaims: the settle, sent at the deadline, freezes after
	// the row is written, on a connection it pings first). Late-claim
	// seed 18: one session opened at 0 s with a 5 s window, a NEED
	// 250 ms (wall, at recordScale) before the deadline, the settle at
	// it. Through a database lateDB (110 ms)
	// away each way the status read answers at 2 x 110 (+ ~5 ms of HTTP
	// and JDBC) = 225 ms, 25 ms before the deadline: the check passes;
	// the upsert, on the connection just returned, lands 110 ms later,
	// 85 ms after the deadline, past the judge's 20 ms and a 50 ms round
	// of reads. Align: the service stores deadline_at truncated to whole
	// seconds, so a run started at once gets a deadline up to a second
	// before the schedule's and the claim came after it (refused at the
	// check). It is a race: a connection idle over 500 ms is pinged
	// first (2 x 110 ms more), and the check then comes after the
	// deadline. The compensation timer, every 480 ms with a fixed delay
	// (500 would ping its own connection every pass), keeps one
	// connection used within 480 ms; the claim gets it unless a pass
	// (2 x 110 ms) holds it: p ~ 480/700 ~ 0.7 (10 of 14 tries measured
	// on a helper's loaded machine), but 1 of 3 in CI's fresh-clone run;
	// 12 tries miss with p ~ (2/3)^12 ~ 0.8% at the lower rate, ~ 0.3^12 at
	// the higher (a try is ~16 s: 3 minutes at the most).
	lateClaimDefect = defect{Name: "late-claim", Family: lootfaults.Families.LateClaim, Seed: 18, SlowDB: lateDB,
		Align: time.Second, Args: []string{"--loot.compensate.interval-millis=480"}, Reruns: 12,
		Want: []engine.Property{lootfaults.Properties.InWindow}}
	// frozen-claims: submitIntent's check reads CLAIMING before the
	// settle's lockForSettle and its upsert lands after the settle read
	// the claims: the claim is answered accepted and the settle never
	// ranked it (FrozenClaims; and InWindow, since lockForSettle matches
	// only deadline_at <= NOW(): the freeze, and the row after it, come
	// after the deadline). Late-claim seed 18, the late-claim defect's
	// schedule, on two instances (its nodes 0 and 1): x0 opened at 0 on
	// instance 0 with a 5 s window (Align: deadline_at is then the
	// schedule's D = 5 s), p3's GREED at 1.6 s on instance 0, p1's NEED
	// at 4.75 s (250 ms before D) on instance 1, the settle at D on
	// instance 0. Instance 1 is lateDB (110 ms) from MariaDB each way,
	// instance 0 next to it (FarDB). p1's status read reaches the
	// database at 4.75 + 0.11 = 4.86 s, before the settle is sent; its
	// answer is back at 4.97 s (+ a few ms of HTTP and JDBC), before D by
	// the JVM's clock, so the check passes and the upsert, on the
	// connection just returned, reaches the database at 5.08 s. The
	// settle reaches it at D + a few ms and is CLOSED, ranked on p3's
	// GREED alone, by ~D + 15 ms (it answered at 5.014 s): p1's row lands
	// ~65 ms after the freeze, and a round of reads every 50 ms + their
	// time shows the CLOSED session without it (in 11 of 11 runs whose
	// claim was accepted). RuleOrder holds: the judge ranks the claims
	// it saw frozen (p3's alone); the NEED that should have won shows as
	// FrozenClaims. It is a race: a connection idle over 500 ms is
	// pinged first (2 x 110 ms more), the check answers at ~5.19 s and
	// is refused. The compensation timer, every 480 ms with a fixed
	// delay, keeps one connection used; a pass holds it 2 x 110 ms, so
	// the claim gets it unpinged with p ~ 480/700 ~ 0.69: measured 11 of
	// 16 runs (3 of 4 and 8 of 12 in two campaigns, every miss a refusal:
	// 4 pinged checks, 1 check 38 ms late at load 10-16); the record was
	// taken on try 1 and four replays took 1, 1, 1 and 3 tries (16 of 23
	// tries in all, 0.70). 12 tries miss with p ~
	// 0.31^12 ~ 1e-6 at that rate, (2/3)^12 ~ 0.8% at the 1 in 3 the
	// late-claim defect once showed in CI (a try is ~16 s).
	//
	// Why two instances at two distances: with one latency L on every
	// path, the upsert reaches the database L after the JVM judged the
	// deadline (before D), and lockForSettle at least L after the settle
	// is sent (at or after D, or it matches nothing): the row always
	// lands before the freeze, which is the late-claim defect (InWindow
	// only). Measured: this workload with both instances 110 ms away, 8
	// runs: 3 claims accepted, each failing InWindow alone, FrozenClaims
	// in none (lockForSettle, 110 ms away too, reaches the database at
	// 5.11 s at the earliest; the row is in at ~5.08 s). It would need the upsert
	// to wait on a ping, and the pool hands it the connection its check
	// has just returned (newest first): only another request borrowing
	// that one in the microseconds between the two statements would, a
	// timing no client can aim at.
	frozenClaimsDefect = defect{Name: "frozen-claims", Family: lootfaults.Families.LateClaim, Seed: 18, Instances: 2,
		FarDB: []time.Duration{0, lateDB}, Align: time.Second, Args: []string{"--loot.compensate.interval-millis=480"}, Reruns: 12,
		Want: []engine.Property{lootfaults.Properties.FrozenClaims, lootfaults.Properties.InWindow}}
	cancelRaceDefect = defect{Name: "cancel-race", Family: lootfaults.Families.CancelRace, Seed: 62, Instances: 2, SlowDB: slowDB,
		Want: []engine.Property{lootfaults.Properties.NoOverGrant}}
)

// recordedDefects are this file's defects by the test that replays each,
// for the test that needs no service.
var recordedDefects = map[string]defect{
	"TestServiceModeFindsTheOutsider":               outsiderDefect,
	"TestServiceModeFindsTheSettlerKilledMidSettle": stuckSettleDefect,
	"TestServiceModeFindsTheCancelRacingTheSettle":  cancelRaceDefect,
	"TestServiceModeFindsTiesOrderedAgainstTheRule": tiesDefect,
	"TestServiceModeFindsTheLateClaim":              lateClaimDefect,
	"TestServiceModeFindsTheClaimAfterTheFreeze":    frozenClaimsDefect,
}

// slowDB is the stuck-settle and cancel-race fleets' latency each way
// between the service and MariaDB (see killAfter and cancelRaceDefect).
const slowDB = 200 * time.Millisecond

// lateDB is the late-claim fleet's latency each way to MariaDB: a claim
// sent 250 ms before the deadline passes the check at 2 x lateDB and is
// written at 3 x lateDB, so 250/3 < lateDB < 250/2 (see lateClaimDefect;
// slowDB, 200 ms, refuses it at the check).
const lateDB = 110 * time.Millisecond

// killAfter is how long after a settle is sent its instance is killed
// -9, through a database slowDB (200 ms) away each way. The settle's
// statements each borrow a connection and autocommit; one idle for more
// than 500 ms is pinged first (ConnectionPool). lockForSettle has
// committed by 600 ms (a ping's round trip, 400 ms, then its UPDATE's
// way there, 200 ms) and insertGrantIgnore runs no earlier than 1000 ms
// (the UPDATE's way there and back unpinged, 400 ms, selectRanked's round
// trip, 400 ms, the INSERT's way there, 200 ms). 800 ms is the middle,
// 200 ms from either edge: the kill lands while the session is SETTLING
// with no grant written, whatever the pool did.
const killAfter = 800 * time.Millisecond

// killMidSettle plans one fault: a kill -9 of the instance the first
// settle is sent to, killAfter after its send, restarted on its port 2 s
// later (the sender's retries meanwhile go to the other instance).
func killMidSettle(w lootservice.Workload) lootservice.FaultPlan {
	for _, s := range w.Sends {
		if w.Schedule.Requests[s.Request].Kind == lootfaults.Kinds.SettleNow {
			return lootservice.FaultPlan{Faults: []lootservice.Fault{{At: s.At + killAfter, For: 2 * time.Second, Target: s.Target, Kind: lootservice.ProcKill}}}
		}
	}
	return lootservice.FaultPlan{}
}

// TestServiceModeFindsTheOutsider: the outsider family's run, replayed
// from its record, fails MembersOnly and NoOverGrant, nothing else.
func TestServiceModeFindsTheOutsider(t *testing.T) { recorded(t, outsiderDefect) }

// TestServiceModeFindsTheSettlerKilledMidSettle: a kill -9 during a
// settle leaves the session SETTLING past the drain (NoLostGrant).
func TestServiceModeFindsTheSettlerKilledMidSettle(t *testing.T) { recorded(t, stuckSettleDefect) }

// TestServiceModeFindsTheCancelRacingTheSettle: a cancel racing a
// settle over HTTP ends with the canceled session's item delivered
// (NoOverGrant).
func TestServiceModeFindsTheCancelRacingTheSettle(t *testing.T) { recorded(t, cancelRaceDefect) }

// TestServiceModeFindsTiesOrderedAgainstTheRule: two NEEDs of one
// second, ranked in MariaDB's order and not the earlier claim first
// (RuleOrder, judged from the tables).
func TestServiceModeFindsTiesOrderedAgainstTheRule(t *testing.T) { recorded(t, tiesDefect) }

// TestServiceModeFindsTheLateClaim: a claim the service judged before
// its deadline is written after it (InWindow, read from the tables).
func TestServiceModeFindsTheLateClaim(t *testing.T) { recorded(t, lateClaimDefect) }

// TestServiceModeFindsTheClaimAfterTheFreeze: a claim the service
// judged before the freeze is written after it and answered accepted
// (FrozenClaims, and InWindow: the freeze is after the deadline).
func TestServiceModeFindsTheClaimAfterTheFreeze(t *testing.T) { recorded(t, frozenClaimsDefect) }

// TestCommittedRecordsAreCurrent: each defect's committed record is what
// its family, seed and plan make today, and judged again fails exactly
// the defect's properties. It needs no service: a record that went stale
// (a generator or a plan changed) fails here even where Java is missing.
func TestCommittedRecordsAreCurrent(t *testing.T) {
	for _, test := range slices.Sorted(maps.Keys(recordedDefects)) {
		if _, err := committed(recordedDefects[test], test); err != nil {
			t.Error(err)
		}
	}
}

// TestAStaleRecordIsCaught: a record whose seed, schedule, fault plan or
// fleet size is no longer the defect's is stale (the check above has
// teeth).
func TestAStaleRecordIsCaught(t *testing.T) {
	d := stuckSettleDefect
	r, err := readRecord(d)
	if err != nil {
		t.Fatal(err)
	}
	for name, change := range map[string]func(*lootservice.Record){
		"seed": func(r *lootservice.Record) { r.Run.Seed++ },
		"schedule": func(r *lootservice.Record) {
			r.Run.Schedule = strings.Replace(r.Run.Schedule, "deadline=10s", "deadline=11s", 1)
		},
		"plan":    func(r *lootservice.Record) { r.Run.Faults.Faults[0].At += time.Millisecond },
		"targets": func(r *lootservice.Record) { r.Run.Targets = r.Run.Targets[:1] },
	} {
		c := r
		c.Run.Targets = slices.Clone(r.Run.Targets)
		c.Run.Faults.Faults = slices.Clone(r.Run.Faults.Faults)
		change(&c)
		if why := d.stale(c); why == "" {
			t.Errorf("a record with its %s changed is not stale\nTo reproduce: go test ./impls/loot/seedservice -run TestAStaleRecordIsCaught", name)
		}
	}
	if why := d.stale(r); why != "" {
		t.Errorf("the committed record is stale: %s", why)
	}
	// A run of an aligned defect that did not start on a whole second
	// was not the defect's run.
	late, err := readRecord(lateClaimDefect)
	if err != nil {
		t.Fatal(err)
	}
	late.Run.Started = late.Run.Started.Add(time.Millisecond)
	if why := lateClaimDefect.stale(late); why == "" {
		t.Errorf("a late-claim record started off a whole second is not stale\nTo reproduce: go test ./impls/loot/seedservice -run TestAStaleRecordIsCaught")
	}
}

// TestAFreezeNoRoundSawShowsAsRuleOrder: what the judge can see of the
// claim written after the freeze. The document's service keeps no frozen
// set, so the judge takes the claim rows of the first round that shows
// the session SETTLING or CLOSED as the set the settle ranked. The
// committed frozen-claims record has a round between the freeze and the
// late row (FrozenClaims, InWindow); without that round the first
// closed round already shows the late NEED, which then looks frozen in
// and in time (placed at the round before's start, before the
// deadline), and the GREED's grant is what fails: RuleOrder alone. So a
// sampler too slow for the window still reports the defect, as another
// property. It needs no service.
func TestAFreezeNoRoundSawShowsAsRuleOrder(t *testing.T) {
	const repro = "go test ./impls/loot/seedservice -run TestAFreezeNoRoundSawShowsAsRuleOrder"
	r, err := readRecord(frozenClaimsDefect)
	if err != nil {
		t.Fatal(err)
	}
	first := -1
	for _, s := range r.Samples {
		if s.Session == 0 && s.Op == "sql-session" && (strings.Contains(s.Answer, `"CLOSED"`) || strings.Contains(s.Answer, `"SETTLING"`)) {
			first = s.Round
			break
		}
	}
	if first < 0 {
		t.Fatalf("%s: no round shows x0 settling or closed\nTo reproduce: %s", frozenClaimsDefect.file(), repro)
	}
	r.Samples = slices.DeleteFunc(slices.Clone(r.Samples), func(s lootservice.Sample) bool { return s.Session == 0 && s.Round == first })
	fs, err := lootservice.Judge(r, lootservice.DefaultTolerance)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := failed(fs), []engine.Property{lootfaults.Properties.RuleOrder}; !same(got, want) {
		t.Errorf("%s without round %d of x0 fails %v, want %v\n%sTo reproduce: %s", frozenClaimsDefect.file(), first, got, want, anomalies(fs), repro)
	}
}
