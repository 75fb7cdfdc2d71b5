package inventory_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/onceproof/onceproof/props/loot/service/inventory"
)

// repro is the command that reruns the failing test.
func repro(t *testing.T) string {
	return fmt.Sprintf("reproduce: go test ./props/loot/service/inventory -run '^%s$'", strings.Split(t.Name(), "/")[0])
}

// tick is a clock that moves 1 ms per reading: each delivery's At is its
// own, and nothing reads the wall clock.
func tick() func() time.Time {
	var n atomic.Int64
	base := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	return func() time.Time { return base.Add(time.Duration(n.Add(1)) * time.Millisecond) }
}

func start(t *testing.T, plan inventory.Plan) *inventory.Server {
	t.Helper()
	s, err := inventory.Start(inventory.Options{Now: tick(), Plan: plan})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// grant is a delivery body of the protocol for key session:player:loot.
type grant struct {
	GrantNo  string `json:"grantNo"`
	Session  string `json:"sessionNo"`
	Player   int64  `json:"playerId"`
	Loot     string `json:"lootCode"`
	Quantity int    `json:"quantity"`
}

func grantOf(session string, player int64, loot string) grant {
	return grant{GrantNo: fmt.Sprintf("%s:%d:%s", session, player, loot), Session: session, Player: player, Loot: loot, Quantity: 1}
}

// post sends body (a grant or raw bytes) with key; it returns the status
// and the answer's text, or the transport's error.
func post(c *http.Client, url, key string, body any) (int, string, error) {
	raw, ok := body.([]byte)
	if !ok {
		raw, _ = json.Marshal(body)
	}
	req, _ := http.NewRequest("POST", url, bytes.NewReader(raw))
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(b)), nil
}

// outcomes lists the ledger's outcomes in arrival order.
func outcomes(ds []inventory.Delivery) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = fmt.Sprintf("%s %s %d", d.Key, d.Outcome, d.Status)
	}
	return out
}

func TestServerAppliesAKeyOnceAndAnswersRepeatsAlready(t *testing.T) {
	s := start(t, nil)
	g := grantOf("S1", 1001, "SWORD")
	for i, want := range []string{`{"result":"applied","grantNo":"S1:1001:SWORD"}`, `{"result":"already","grantNo":"S1:1001:SWORD"}`} {
		st, body, err := post(http.DefaultClient, s.URL(), g.GrantNo, g)
		if err != nil || st != 200 || body != want {
			t.Fatalf("delivery %d: %d %s %v, want 200 %s; %s", i, st, body, err, want, repro(t))
		}
	}
	ds := s.Deliveries()
	if got := strings.Join(outcomes(ds), ", "); got != "S1:1001:SWORD applied 200, S1:1001:SWORD already 200" {
		t.Errorf("ledger %s; %s", got, repro(t))
	}
	if d := ds[0]; d.Index != 0 || d.Session != "S1" || d.Player != 1001 || d.Loot != "SWORD" || d.Quantity != 1 || !d.At.Before(ds[1].At) {
		t.Errorf("first delivery recorded as %+v; %s", d, repro(t))
	}
}

func TestServerRefusesWhatBreaksTheProtocolAndAppliesNothing(t *testing.T) {
	s := start(t, nil)
	g := grantOf("S1", 1001, "SWORD")
	other := g
	other.Player = 1002
	cases := []struct {
		name string
		key  string
		body any
		want int
	}{
		{"no key", "", g, 400},
		{"key is not the grantNo", "S1:1002:SWORD", g, 400},
		{"not JSON", g.GrantNo, []byte("grant please"), 400},
		{"no player", g.GrantNo, grant{GrantNo: g.GrantNo, Session: "S1", Loot: "SWORD", Quantity: 1}, 400},
		{"quantity 0", g.GrantNo, grant{GrantNo: g.GrantNo, Session: "S1", Player: 1001, Loot: "SWORD"}, 400},
	}
	for _, tc := range cases {
		if st, body, err := post(http.DefaultClient, s.URL(), tc.key, tc.body); err != nil || st != tc.want {
			t.Errorf("%s: %d %s %v, want %d; %s", tc.name, st, body, err, tc.want, repro(t))
		}
	}
	// Every refusal applied nothing: the grant's first well-formed
	// delivery is still the one that applies.
	if st, body, _ := post(http.DefaultClient, s.URL(), g.GrantNo, g); st != 200 || !strings.Contains(body, `"applied"`) {
		t.Errorf("first well-formed delivery after the refusals: %d %s, want 200 applied; %s", st, body, repro(t))
	}
	// The same key with another body is refused, not taken for a repeat.
	other.GrantNo = g.GrantNo
	if st, body, _ := post(http.DefaultClient, s.URL(), g.GrantNo, other); st != 422 {
		t.Errorf("key reused with another body: %d %s, want 422; %s", st, body, repro(t))
	}
	resp, err := http.Get(s.URL())
	if err != nil || resp.StatusCode != 405 || resp.Header.Get("Allow") != "POST" {
		t.Errorf("GET: %v %v, want 405 with Allow: POST; %s", resp, err, repro(t))
	}
	var refused, applied int
	for _, d := range s.Deliveries() {
		switch d.Outcome {
		case inventory.Refused:
			refused++
			if d.Detail == "" || d.Status < 400 {
				t.Errorf("refusal recorded without its reason or status: %+v; %s", d, repro(t))
			}
		case inventory.Applied:
			applied++
		}
	}
	if refused != len(cases)+1 || applied != 1 {
		t.Errorf("ledger has %d refused and %d applied, want %d and 1: %v; %s", refused, applied, len(cases)+1, outcomes(s.Deliveries()), repro(t))
	}
}

func TestServerAppliesConcurrentIdenticalDeliveriesOnce(t *testing.T) {
	s := start(t, nil)
	g := grantOf("S1", 1001, "SWORD")
	const n = 32
	var wg sync.WaitGroup
	statuses := make([]int, n)
	for i := range n {
		wg.Go(func() { statuses[i], _, _ = post(http.DefaultClient, s.URL(), g.GrantNo, g) })
	}
	wg.Wait()
	applied := 0
	for i, d := range s.Deliveries() {
		if statuses[i] != 200 {
			t.Errorf("delivery %d answered %d, want 200; %s", i, statuses[i], repro(t))
		}
		if d.Outcome == inventory.Applied {
			applied++
		}
	}
	if applied != 1 || len(s.Deliveries()) != n {
		t.Errorf("%d concurrent deliveries of one key: %d recorded, %d applied, want %d and 1; %s", n, len(s.Deliveries()), applied, n, repro(t))
	}
}

// TestServerFaultsDoWhatTheirNamesSay checks each fault as a client sees
// it and as the ledger records it: Fail applies nothing (the next
// delivery applies), the other two apply (the next is a repeat) while the
// client learns nothing.
func TestServerFaultsDoWhatTheirNamesSay(t *testing.T) {
	for _, f := range inventory.Faults {
		t.Run(string(f), func(t *testing.T) {
			s := start(t, inventory.Table{First: f}.Plan())
			g := grantOf("S1", 1001, "SWORD")
			// A fresh connection per request: a lost reply must reach
			// this client as an error, not as net/http's silent retry
			// on a kept-alive connection.
			c := &http.Client{Timeout: 300 * time.Millisecond, Transport: &http.Transport{DisableKeepAlives: true}}
			st, body, err := post(c, s.URL(), g.GrantNo, g)
			wantNext := inventory.Repeat
			switch f {
			case inventory.Fail:
				wantNext = inventory.Applied
				if err != nil || st != 503 {
					t.Fatalf("first delivery: %d %s %v, want 503; %s", st, body, err, repro(t))
				}
			default:
				if err == nil {
					t.Fatalf("first delivery answered %d %s, want no answer; %s", st, body, repro(t))
				}
			}
			if st, body, err := post(c, s.URL(), g.GrantNo, g); err != nil || st != 200 {
				t.Fatalf("second delivery: %d %s %v, want 200; %s", st, body, err, repro(t))
			}
			ds := s.Deliveries()
			if len(ds) != 2 || ds[0].Fault != f || ds[1].Fault != inventory.None || ds[1].Outcome != wantNext {
				t.Errorf("ledger %+v, want the first with fault %s and the second %s; %s", ds, f, wantNext, repro(t))
			}
		})
	}
}

func TestTablePlanTakesIndexThenKeyThenFirst(t *testing.T) {
	p := inventory.Table{
		ByIndex: map[int]inventory.Fault{5: inventory.LoseReply},
		ByKey:   map[string][]inventory.Fault{"k": {inventory.None, inventory.Fail}},
		First:   inventory.TimeoutAfterApply,
	}.Plan()
	for _, tc := range []struct {
		index, attempt int
		key            string
		want           inventory.Fault
	}{
		{5, 0, "k", inventory.LoseReply},
		{0, 0, "k", inventory.None},
		{1, 1, "k", inventory.Fail},
		{2, 2, "k", inventory.None},
		{3, 0, "j", inventory.TimeoutAfterApply},
		{4, 1, "j", inventory.None},
	} {
		if got := p(tc.index, tc.key, tc.attempt); got != tc.want {
			t.Errorf("plan(%d, %q, %d) = %q, want %q; %s", tc.index, tc.key, tc.attempt, got, tc.want, repro(t))
		}
	}
	for _, f := range append(inventory.Faults, inventory.None) {
		if got, err := inventory.ParseFault(string(f)); err != nil || got != f {
			t.Errorf("ParseFault(%q) = %q, %v; %s", f, got, err, repro(t))
		}
	}
	if _, err := inventory.ParseFault("slow"); err == nil {
		t.Errorf("ParseFault(slow) took it; %s", repro(t))
	}
}

func TestLedgerJSONReadsBackWhatItWrote(t *testing.T) {
	s := start(t, inventory.Table{ByIndex: map[int]inventory.Fault{0: inventory.Fail}}.Plan())
	g := grantOf("S1", 1001, "SWORD")
	for range 2 {
		post(http.DefaultClient, s.URL(), g.GrantNo, g)
	}
	post(http.DefaultClient, s.URL(), "", g)
	var buf bytes.Buffer
	if err := inventory.WriteJSON(&buf, s.Deliveries()); err != nil {
		t.Fatal(err)
	}
	back, err := inventory.ReadJSON(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatalf("%v\n%s; %s", err, buf.String(), repro(t))
	}
	var again bytes.Buffer
	inventory.WriteJSON(&again, back)
	if again.String() != buf.String() || len(back) != 3 {
		t.Errorf("round trip changed the ledger:\n%s\nto\n%s; %s", buf.String(), again.String(), repro(t))
	}
	if _, err := inventory.ReadJSON(strings.NewReader(`{"version":2,"deliveries":[]}`)); err == nil {
		t.Errorf("ReadJSON took version 2; %s", repro(t))
	}
	if _, err := inventory.ReadJSON(strings.NewReader(`{"version":1,"deliveries":[{"index":0,"grant":"x"}]}`)); err == nil {
		t.Errorf("ReadJSON took an unknown field; %s", repro(t))
	}
}

// A Table is the fault plan a record file carries: it reads back from
// JSON as the same plan.
func TestTableReadsBackFromJSON(t *testing.T) {
	tab := inventory.Table{
		ByIndex: map[int]inventory.Fault{3: inventory.LoseReply},
		ByKey:   map[string][]inventory.Fault{"S1:1:X": {inventory.Fail, inventory.TimeoutAfterApply}},
		First:   inventory.TimeoutAfterApply,
	}
	b, err := json.Marshal(tab)
	if err != nil {
		t.Fatal(err)
	}
	var back inventory.Table
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatalf("%v: %s; %s", err, b, repro(t))
	}
	p, q := tab.Plan(), back.Plan()
	for index := range 5 {
		for _, key := range []string{"S1:1:X", "S2:2:Y"} {
			for attempt := range 3 {
				if before, after := p(index, key, attempt), q(index, key, attempt); before != after {
					t.Errorf("plan(%d, %s, %d): %q before JSON, %q after (%s); %s", index, key, attempt, before, after, b, repro(t))
				}
			}
		}
	}
}
