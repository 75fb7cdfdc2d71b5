package lootservice

import (
	"encoding/json"
	"testing"
	"time"

	lootfaults "github.com/onceproof/onceproof/faults/loot"
	lootprops "github.com/onceproof/onceproof/props/loot"
)

const sqlRepro = "go test ./props/loot/service -count=1 -run TestRuleOrderFromTheClaimRows"

// twoNeeds: players 3 and 1 claim NEED on one item.
const twoNeeds = `# onceproof schedule v1
family loot:ties
nodes 1
retry 250ms
max-attempts 16
concurrent false
team 1 2 3
session x0 quantity=1 deadline=10s
request r0 open x0
request r1 claim x0 player=3 intent=NEED
request r2 claim x0 player=1 intent=NEED
request r3 settle x0
deliver at=0s r0 node=0
deliver at=2s r1 node=0
deliver at=4s r2 node=0
deliver at=10s r3 node=0
`

// tablesOnly is a service whose state only its tables show (seed.spec's
// shape): no reads, the session, grants, claims and items read as SQL.
const tablesOnly = `auth header X-Player-Id {player}
op open   POST internal /open {"s":"{session}"}
op claim  POST player   /claim {"s":"{session}","p":{player},"i":"{intent}"}
op settle POST internal /settle {"s":"{session}"}
op cancel POST internal /cancel {"s":"{session}"}
op start   absent
op session absent
op audit   absent
op mine    absent
answer *  accepted status=200
field grant.delivered SUCCESS
sql mysql session SELECT status, deadline_at FROM s WHERE n = {session}
sql mysql grants  SELECT grant_no, player_id, status FROM g WHERE n = {session}
sql mysql claims  SELECT player_id, intent_type, created_at, fair_score FROM i WHERE n = {session}
sql mysql items   SELECT grant_no, player_id FROM g WHERE n = {session} AND status = 'SUCCESS'
`

// row is a claim row as the claims query returns it: nil fair leaves the
// wins column out.
type row struct {
	player int
	at     string // created_at's time of day
	fair   *int
}

// tableRecord is a record of twoNeeds read from the tables in rounds at
// 1 s, 3 s, 5 s, 11 s, 12 s: claims[k] are the rows round k reads; from
// 11 s the session is CLOSED with its item granted to winner.
func tableRecord(t *testing.T, claims [5][]row, winner int) Record {
	t.Helper()
	s, err := lootprops.World.Parse(twoNeeds)
	if err != nil {
		t.Fatal(err)
	}
	started := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	r := Record{Run: Run{Family: "ties", Tag: "h", Scale: 1, Targets: []Target{{}}, Spec: tablesOnly, Schedule: lootprops.World.Format(s), Started: started}}
	for i, at := range []time.Duration{0, 2 * time.Second, 4 * time.Second, 10 * time.Second} {
		o := Accepted
		if i == 3 {
			o = Noted
		}
		r.Exchanges = append(r.Exchanges, Exchange{Request: i, Attempt: i, Sent: at, Done: at + 5*time.Millisecond, Status: 200, Answer: `{}`, Outcome: o})
	}
	js := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	for k, at := range []time.Duration{time.Second, 3 * time.Second, 5 * time.Second, 11 * time.Second, 12 * time.Second} {
		status, grants, items := "CLAIMING", [][]any{}, [][]any{}
		if k >= 3 {
			no := "h-x0:" + string(rune('0'+winner)) + ":h-item0"
			status, grants, items = "CLOSED", [][]any{{no, winner, "SUCCESS"}}, [][]any{{no, winner}}
		}
		var rows [][]any
		for _, c := range claims[k] {
			cols := []any{c.player, "NEED", "2026-03-01 " + c.at}
			if c.fair != nil {
				cols = append(cols, *c.fair)
			}
			rows = append(rows, cols)
		}
		if rows == nil {
			rows = [][]any{}
		}
		for i, q := range []struct {
			op   string
			rows any
		}{{"sql-session", [][]any{{status, "2026-03-01 12:00:10"}}}, {"sql-grants", grants}, {"sql-claims", rows}, {"sql-items", items}} {
			sent := at + time.Duration(i)*time.Millisecond
			r.Samples = append(r.Samples, Sample{Session: 0, Op: q.op, Round: k, Sent: sent, Done: sent + time.Millisecond, Status: 200, Answer: js(q.rows)})
		}
	}
	r.End = 13 * time.Second
	return r
}

// TestRuleOrderFromTheClaimRows: a service with no audit read is judged
// on RuleOrder from its claim rows when they carry the wins: the claim
// the rounds show first wins a tie of priority and wins, fewer wins come
// first, and two claims one read showed first and the service recorded in
// one second tie, the lower id first. Without the wins column, or with
// two claims the samples cannot order and the service dated apart, it is
// not judged.
func TestRuleOrderFromTheClaimRows(t *testing.T) {
	zero, one := 0, 1
	p3, p1 := row{3, "12:00:02", &zero}, row{1, "12:00:04", &zero}
	apart := [5][]row{{}, {p3}, {p3, p1}, {p3, p1}, {p3, p1}}
	same3, same1 := row{3, "12:00:04", &zero}, row{1, "12:00:04", &zero}
	together := [5][]row{{}, {}, {same3, same1}, {same3, same1}, {same3, same1}}
	dated3 := row{3, "12:00:03", &zero}
	datedApart := [5][]row{{}, {}, {dated3, same1}, {dated3, same1}, {dated3, same1}}
	fair3 := row{3, "12:00:02", &one}
	fairer := [5][]row{{}, {fair3}, {fair3, p1}, {fair3, p1}, {fair3, p1}}
	no3, no1 := row{3, "12:00:02", nil}, row{1, "12:00:04", nil}
	noWins := [5][]row{{}, {no3}, {no3, no1}, {no3, no1}, {no3, no1}}
	for _, c := range []struct {
		name   string
		claims [5][]row
		winner int
		want   string
	}{
		{"the earlier claim wins", apart, 3, Held},
		{"the later claim won", apart, 1, Failed},
		{"fewer wins first", fairer, 1, Held},
		{"more wins won", fairer, 3, Failed},
		{"a tie of one second goes to the lower id", together, 1, Held},
		{"a tie of one second went to the higher id", together, 3, Failed},
		{"unordered, dated apart", datedApart, 1, NotJudged},
		{"no wins column", noWins, 3, NotJudged},
	} {
		f := verdictOf(t, tableRecord(t, c.claims, c.winner), lootfaults.Properties.RuleOrder)
		if f.Verdict != c.want {
			t.Errorf("%s: RuleOrder %s (%s %v), want %s\nTo reproduce: %s", c.name, f.Verdict, f.How, f.Anomalies, c.want, sqlRepro)
		}
	}
}
