package lootservice

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/onceproof/onceproof/engine"
	lootfaults "github.com/onceproof/onceproof/faults/loot"
	lootprops "github.com/onceproof/onceproof/props/loot"
)

// oneClaim is a session of one member's NEED claim, its deadline 10 s in.
const oneClaim = `# onceproof schedule v1
family loot:clean
nodes 1
retry 250ms
max-attempts 16
concurrent false
team 1 2 3
session x0 quantity=1 deadline=10s
request r0 open x0
request r1 start x0
request r2 claim x0 player=1 intent=NEED
request r3 settle x0
deliver at=0s r0 node=0
deliver at=50ms r1 node=0
deliver at=9s r2 node=0
deliver at=10s r3 node=0
`

// sampled is one hand-made sampling round: when its reads were sent and
// answered, the status the session read showed, and whether player 1's
// read showed its claim.
type sampled struct {
	sent, done time.Duration
	status     string
	claim      bool
}

// handRecord is a record of oneClaim whose claim was sent at claimSent and
// answered accepted at claimDone, sampled in rounds.
func handRecord(t *testing.T, claimSent, claimDone time.Duration, rounds []sampled) Record {
	t.Helper()
	s, err := lootprops.World.Parse(oneClaim)
	if err != nil {
		t.Fatal(err)
	}
	started := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	deadline := started.Add(10 * time.Second).Format(time.RFC3339Nano)
	r := Record{Run: Run{Family: "clean", Tag: "h", Scale: 1, Targets: []Target{{}}, Spec: DefaultSpec().Text, Schedule: lootprops.World.Format(s), Started: started}}
	ex := func(req int, sent, done time.Duration, status int, answer string, o Outcome) {
		r.Exchanges = append(r.Exchanges, Exchange{Request: req, Attempt: len(r.Exchanges), Sent: sent, Done: done, Status: status, Answer: answer, Outcome: o})
	}
	ex(0, 0, 5*time.Millisecond, 201, `{}`, Accepted)
	ex(1, 50*time.Millisecond, 55*time.Millisecond, 200, `{}`, Accepted)
	ex(2, claimSent, claimDone, 200, `{"created":true}`, Accepted)
	for k, rd := range rounds {
		grants := "[]"
		if rd.status == "CLOSED" {
			grants = `[{"playerId":1,"grantNo":"h-x0:1:h-item0","status":"SUCCESS"}]`
		}
		r.Samples = append(r.Samples, Sample{Session: 0, Op: "session", Round: k, Sent: rd.sent, Done: rd.sent + (rd.done-rd.sent)/2, Status: 200,
			Answer: fmt.Sprintf(`{"status":%q,"deadline":%q,"grants":%s}`, rd.status, deadline, grants)})
		claim := "null"
		if rd.claim {
			claim = fmt.Sprintf(`{"playerId":1,"intentType":"NEED","claimedAt":%q}`, started.Add(claimSent).Format(time.RFC3339Nano))
		}
		r.Samples = append(r.Samples, Sample{Session: 0, Op: "mine", Player: 1, Round: k, Sent: rd.sent + (rd.done-rd.sent)/2, Done: rd.done, Status: 200, Answer: fmt.Sprintf(`{"claim":%s}`, claim)})
	}
	r.End = rounds[len(rounds)-1].done
	return r
}

func verdictOf(t *testing.T, r Record, p engine.Property) Finding {
	t.Helper()
	fs, err := Judge(r, DefaultTolerance)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fs {
		if f.Property == p {
			return f
		}
	}
	t.Fatalf("no finding for %s", p)
	return Finding{}
}

const ms = time.Millisecond

// TestInWindowFailsOnlyAClaimSurelyWrittenAfterTheDeadline: a claim first
// seen in a round that ended after the deadline was written in time as far
// as a black box knows if the round before began before it; it is late
// only when that round too began after the deadline.
func TestInWindowFailsOnlyAClaimSurelyWrittenAfterTheDeadline(t *testing.T) {
	const deadline = 10 * time.Second
	inTime := handRecord(t, deadline-30*ms, deadline-5*ms, []sampled{
		{deadline - 100*ms, deadline - 60*ms, "CLAIMING", false},
		{deadline - 50*ms, deadline + 40*ms, "CLAIMING", true}, // read after the deadline, written before it
	})
	if f := verdictOf(t, inTime, lootfaults.Properties.InWindow); f.Verdict != Held {
		t.Errorf("a claim written in time: InWindow %s %v\nTo reproduce: go test ./props/loot/service -run TestInWindowFailsOnlyAClaimSurelyWrittenAfterTheDeadline", f.Verdict, f.Anomalies)
	}
	late := handRecord(t, deadline+200*ms, deadline+230*ms, []sampled{
		{deadline + 100*ms, deadline + 150*ms, "CLAIMING", false}, // began after the deadline, no claim yet
		{deadline + 240*ms, deadline + 260*ms, "CLAIMING", true},
	})
	if f := verdictOf(t, late, lootfaults.Properties.InWindow); f.Verdict != Failed {
		t.Errorf("a claim written after the deadline and accepted: InWindow %s, want failed\nTo reproduce: go test ./props/loot/service -run TestInWindowFailsOnlyAClaimSurelyWrittenAfterTheDeadline", f.Verdict)
	}
}

// TestOnTimeFailsOnlyAFreezeSurelyBeforeTheDeadline: a freeze first seen in
// a round that ended after the deadline may have happened after it; one
// seen in a round that ended before it is early.
func TestOnTimeFailsOnlyAFreezeSurelyBeforeTheDeadline(t *testing.T) {
	const deadline = 10 * time.Second
	claimed := sampled{deadline - 300*ms, deadline - 250*ms, "CLAIMING", true}
	onTime := handRecord(t, 9*time.Second, 9*time.Second+5*ms, []sampled{claimed,
		{deadline - 50*ms, deadline + 40*ms, "SETTLING", true},
		{deadline + 100*ms, deadline + 140*ms, "CLOSED", true},
	})
	if f := verdictOf(t, onTime, lootfaults.Properties.OnTime); f.Verdict != Held {
		t.Errorf("a freeze seen by a round that ended after the deadline: OnTime %s %v\nTo reproduce: go test ./props/loot/service -run TestOnTimeFailsOnlyAFreezeSurelyBeforeTheDeadline", f.Verdict, f.Anomalies)
	}
	early := handRecord(t, 9*time.Second, 9*time.Second+5*ms, []sampled{claimed,
		{deadline - 200*ms, deadline - 100*ms, "SETTLING", true},
		{deadline + 100*ms, deadline + 140*ms, "CLOSED", true},
	})
	if f := verdictOf(t, early, lootfaults.Properties.OnTime); f.Verdict != Failed {
		t.Errorf("a freeze seen 100ms before the deadline: OnTime %s, want failed\nTo reproduce: go test ./props/loot/service -run TestOnTimeFailsOnlyAFreezeSurelyBeforeTheDeadline", f.Verdict)
	}
}

// TestHonestAnswerReadsTheRoundSentAfterTheAnswer: an accepted claim whose
// row a round begun before the answer did not show is no lie; one no round
// begun after the answer shows is.
func TestHonestAnswerReadsTheRoundSentAfterTheAnswer(t *testing.T) {
	honest := handRecord(t, 9*time.Second, 9*time.Second+20*ms, []sampled{
		{9*time.Second + 10*ms, 9*time.Second + 15*ms, "CLAIMING", false}, // read before the write
		{9*time.Second + 30*ms, 9*time.Second + 35*ms, "CLAIMING", true},
	})
	if f := verdictOf(t, honest, lootfaults.Properties.HonestAnswer); f.Verdict != Held {
		t.Errorf("a claim read before its write: HonestAnswer %s %v\nTo reproduce: go test ./props/loot/service -run TestHonestAnswerReadsTheRoundSentAfterTheAnswer", f.Verdict, f.Anomalies)
	}
	lie := handRecord(t, 9*time.Second, 9*time.Second+20*ms, []sampled{
		{9*time.Second + 10*ms, 9*time.Second + 15*ms, "CLAIMING", false},
		{9*time.Second + 30*ms, 9*time.Second + 35*ms, "CLAIMING", false}, // after the answer, no row
		{9*time.Second + 50*ms, 9*time.Second + 55*ms, "CLAIMING", false},
	})
	if f := verdictOf(t, lie, lootfaults.Properties.HonestAnswer); f.Verdict != Failed {
		t.Errorf("an accepted claim no later read shows: HonestAnswer %s, want failed\nTo reproduce: go test ./props/loot/service -run TestHonestAnswerReadsTheRoundSentAfterTheAnswer", f.Verdict)
	}
}

// TestARecordWithNoCompleteRoundJudgesNothing: a session the workload
// opened and no round read whole (every read failed, as a query the
// database refuses) is never judged held on nothing.
func TestARecordWithNoCompleteRoundJudgesNothing(t *testing.T) {
	r := handRecord(t, 9*time.Second, 9*time.Second+20*ms, []sampled{{9 * time.Second, 9*time.Second + 5*ms, "CLAIMING", true}})
	for i := range r.Samples {
		r.Samples[i].Status, r.Samples[i].Answer, r.Samples[i].Err = 0, "", "could not determine data type of parameter $1"
	}
	fs, err := Judge(r, DefaultTolerance)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fs {
		if f.Verdict != NotJudged || !strings.Contains(f.How, "parameter $1") {
			t.Errorf("%s: %s (%s), want not judged, saying why\nTo reproduce: go test ./props/loot/service -run TestARecordWithNoCompleteRoundJudgesNothing", f.Property, f.Verdict, f.How)
		}
	}
}

// sqlOnly is lootd's spec with the three reads absent, the session read
// from MySQL tables whose DATETIMEs are Asia/Shanghai wall times (as the
// document's Java service keeps them).
func sqlOnly(zone string) string {
	var kept []string
	for _, l := range strings.Split(DefaultSpec().Text, "\n") {
		if strings.HasPrefix(l, "op session ") || strings.HasPrefix(l, "op audit ") || strings.HasPrefix(l, "op mine ") {
			continue
		}
		kept = append(kept, l)
	}
	return strings.Join(append(kept, "op session absent", "op audit absent", "op mine absent", "zone "+zone,
		"sql mysql session SELECT status, deadline_at FROM loot_session WHERE session_no = {session}",
		"sql mysql grants SELECT grant_no, player_id, status FROM loot_grant WHERE session_no = {session}"), "\n") + "\n"
}

// sqlRecord is handRecord's record read as the database's rows instead of
// the session and mine reads: times as zone-less DATETIMEs of Shanghai
// (UTC+8), the deadline whole seconds as MariaDB keeps it.
func sqlRecord(t *testing.T, spec string, claimSent, claimDone time.Duration, rounds []sampled) Record {
	t.Helper()
	r := handRecord(t, claimSent, claimDone, rounds)
	r.Run.Spec = spec
	shanghai := time.FixedZone("CST", 8*3600)
	wall := func(d time.Duration) string { return r.Run.Started.Add(d).In(shanghai).Format("2006-01-02 15:04:05") }
	r.Samples = nil
	for k, rd := range rounds {
		claims := "[]"
		if rd.claim {
			claims = fmt.Sprintf(`[[1,"NEED",%q]]`, wall(claimSent))
		}
		for i, q := range []struct{ op, answer string }{
			{"sql-session", fmt.Sprintf(`[[%q,%q]]`, rd.status, wall(10*time.Second))},
			{"sql-grants", "[]"}, {"sql-claims", claims}, {"sql-items", "[]"},
		} {
			at := rd.sent + time.Duration(i)*(rd.done-rd.sent)/4
			r.Samples = append(r.Samples, Sample{Session: 0, Op: q.op, Round: k, Sent: at, Done: at + (rd.done-rd.sent)/4, Status: 200, Answer: q.answer})
		}
	}
	return r
}

// TestASQLOnlyRecordIsJudgedInTheSpecsZone: with no session read, the
// deadline and the claims come from the tables, read in the spec's zone: a
// claim written 240ms after the deadline fails InWindow; the same rows
// read as UTC put the deadline 8 hours later and the claim in time (which
// is what a judge blind to the zone would say).
func TestASQLOnlyRecordIsJudgedInTheSpecsZone(t *testing.T) {
	const deadline = 10 * time.Second
	rounds := []sampled{
		{deadline + 100*ms, deadline + 150*ms, "CLAIMING", false},
		{deadline + 240*ms, deadline + 260*ms, "CLAIMING", true},
	}
	if f := verdictOf(t, sqlRecord(t, sqlOnly("Asia/Shanghai"), deadline+200*ms, deadline+230*ms, rounds), lootfaults.Properties.InWindow); f.Verdict != Failed {
		t.Errorf("a late claim in the tables, read in Shanghai: InWindow %s (%s), want failed\nTo reproduce: go test ./props/loot/service -run TestASQLOnlyRecordIsJudgedInTheSpecsZone", f.Verdict, f.How)
	}
	if f := verdictOf(t, sqlRecord(t, sqlOnly("UTC"), deadline+200*ms, deadline+230*ms, rounds), lootfaults.Properties.InWindow); f.Verdict != Held {
		t.Errorf("the same rows read as UTC: InWindow %s, want held (the deadline 8h later)\nTo reproduce: go test ./props/loot/service -run TestASQLOnlyRecordIsJudgedInTheSpecsZone", f.Verdict)
	}
}

// TestAbsentReadsAreNotJudgedHeld: with no audit read, Replayable and
// RuleOrder are not judged, saying so; with no session read and no
// database, nothing is.
func TestAbsentReadsAreNotJudgedHeld(t *testing.T) {
	rounds := []sampled{{9 * time.Second, 9*time.Second + 50*ms, "CLAIMING", true}, {10*time.Second + 100*ms, 10*time.Second + 150*ms, "CLOSED", true}}
	r := sqlRecord(t, sqlOnly("Asia/Shanghai"), 8*time.Second, 8*time.Second+20*ms, rounds)
	for _, p := range []engine.Property{lootfaults.Properties.Replayable, lootfaults.Properties.RuleOrder} {
		if f := verdictOf(t, r, p); f.Verdict != NotJudged || !strings.Contains(f.How, "no audit read") {
			t.Errorf("%s with no audit read: %s (%s), want not judged for it\nTo reproduce: go test ./props/loot/service -run TestAbsentReadsAreNotJudgedHeld", p, f.Verdict, f.How)
		}
	}
	var noDB []Sample
	for _, s := range r.Samples {
		if !strings.HasPrefix(s.Op, "sql-") {
			noDB = append(noDB, s)
		}
	}
	r.Samples = noDB
	fs, err := Judge(r, DefaultTolerance)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fs {
		if f.Verdict != NotJudged || !strings.Contains(f.How, "no session read") {
			t.Errorf("%s with no session read and no database: %s (%s), want not judged\nTo reproduce: go test ./props/loot/service -run TestAbsentReadsAreNotJudgedHeld", f.Property, f.Verdict, f.How)
		}
	}
}
