package lootservice_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/onceproof/onceproof/engine"
	lootfaults "github.com/onceproof/onceproof/faults/loot"
	lootprops "github.com/onceproof/onceproof/props/loot"
	lootservice "github.com/onceproof/onceproof/props/loot/service"
	"github.com/onceproof/onceproof/props/loot/service/inventory"
)

// sender is the fake's inventory client: it delivers each grant by the
// inventory protocol, retrying an attempt that got no 200. newKey is the
// bug of the source document's 8.1: a retry sent under a new idempotency
// key (the grant number with the attempt appended, as a fresh UUID per
// call would be), so the inventory cannot tell it from a new grant. lie makes the fake's grant rows
// disagree with the inventory: unsent marks each grant SUCCESS and sends
// nothing, renumbered delivers each under a number of its own (the grant
// number with "-r" appended, as key and body's grantNo, which the
// inventory requires equal) while the grant row keeps its number.
type sender struct {
	url    string
	newKey bool
	lie    string // "", "unsent" or "renumbered"
	wg     sync.WaitGroup
}

// The client's numbers: 300 ms is its whole wait for one reply (a
// loopback delivery answers in a few ms; the inventory holds a
// TimeoutAfterApply reply until the client hangs up), 3 s its backoff,
// longer than the fault window's reach past the deadline (faultWindows),
// and 4 attempts, so a grant whose attempts all met the fault still ends
// within the drain (4 x 3.3 s).
const (
	sendTimeout  = 300 * time.Millisecond
	sendBackoff  = 3 * time.Second
	sendAttempts = 4
)

// deliverer is f.deliver through s.
func (s *sender) deliverer(f *fake) func(no, loot string, player int64, g map[string]any) {
	c := &http.Client{Timeout: sendTimeout}
	return func(no, loot string, player int64, g map[string]any) {
		grantNo := no + ":" + strconv.FormatInt(player, 10) + ":" + loot
		switch s.lie {
		case "unsent":
			g["status"] = "SUCCESS" // under f.mu: the settle holds it
			return
		case "renumbered":
			grantNo += "-r"
		}
		s.wg.Go(func() {
			for k := range sendAttempts {
				if k > 0 {
					time.Sleep(sendBackoff)
				}
				key := grantNo
				if s.newKey && k > 0 {
					key = fmt.Sprintf("%s#%d", grantNo, k)
				}
				body, _ := json.Marshal(map[string]any{"grantNo": key, "sessionNo": no, "playerId": player, "lootCode": loot, "quantity": 1})
				req, _ := http.NewRequest(http.MethodPost, s.url, bytes.NewReader(body))
				req.Header.Set("Idempotency-Key", key)
				resp, err := c.Do(req)
				if err != nil {
					continue
				}
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					f.mu.Lock()
					g["status"] = "SUCCESS"
					f.mu.Unlock()
					return
				}
			}
		})
	}
}

// faultWindows plans an inventory timeout-after-apply around each
// session's deadline, where the fake settles and delivers: from 1 s
// before (lootd's and the fake's claim window is whole seconds, so a
// deadline is within half a second of the schedule's) to 1.5 s after (a
// settle is at most a sampling round, ~10 ms, past the deadline it saw);
// a retry comes at least sendTimeout+sendBackoff = 3.3 s after the first
// attempt, past the window's end. Windows that overlap are merged (the
// inventory holds one plan at a time).
func faultWindows(w lootservice.Workload) lootservice.FaultPlan {
	var p lootservice.FaultPlan
	var deadlines []time.Duration
	for _, x := range w.Schedule.Sessions {
		deadlines = append(deadlines, time.Duration(float64(x.Deadline)*w.Scale)) // wall offsets from the run's start
	}
	slices.Sort(deadlines)
	for _, d := range deadlines {
		at, end := max(d-time.Second, 0), d+1500*time.Millisecond
		if n := len(p.Faults); n > 0 && at <= p.Faults[n-1].At+p.Faults[n-1].For {
			p.Faults[n-1].For = end - p.Faults[n-1].At
			continue
		}
		p.Faults = append(p.Faults, lootservice.Fault{At: at, For: end - at, Target: -1, Kind: lootservice.InvTimeout})
	}
	return p
}

// ledgerRun drives the clean family's seed-2 workload (two sessions, each
// with one winner: seed 1's only claim is a PASS) against a fake that
// delivers to a hosted inventory through s (its url set here), with the
// plan faults gives it, and returns the judge's findings.
func ledgerRun(t *testing.T, s *sender, faults func(lootservice.Workload) lootservice.FaultPlan) ([]lootservice.Finding, lootservice.Record) {
	t.Helper()
	inv, err := inventory.Start(inventory.Options{Now: time.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { inv.Close() })
	f := &fake{}
	s.url = inv.URL()
	f.deliver = s.deliverer(f)
	t.Cleanup(s.wg.Wait) // after the servers close (cleanups run last first): no delivery outlives the test
	tg := startFake(t, f)
	fam := lootfaults.Families.Clean
	const seed = 2
	w, err := lootservice.Generate(fam, seed, fmt.Sprintf("l%d", time.Now().UnixNano()%1e9), scale, 1)
	if err != nil {
		t.Fatal(err)
	}
	o := lootservice.DriveOptions{Targets: []lootservice.Target{tg}, Spec: lootservice.DefaultSpec(), Now: time.Now, Faults: faults(w),
		Inject: lootservice.Injectors{Inventory: inv}}
	rec, err := lootservice.Drive(context.Background(), w, string(fam), seed, o)
	if err != nil {
		t.Fatal(err)
	}
	fs, err := lootservice.Judge(rec, lootservice.DefaultTolerance)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range fs {
		t.Logf("%-13s %s: %s %v", x.Property, x.Verdict, x.How, x.Anomalies)
	}
	if s.lie != "unsent" && !slices.ContainsFunc(rec.Ledger, func(d inventory.Delivery) bool { return d.Outcome == inventory.Applied }) {
		t.Fatalf("the ledger has no item applied (%v): the run proves nothing about deliveries\nTo reproduce: %s", rec.Ledger, ledgerRepro)
	}
	return fs, rec
}

// verdicts is fs by property.
func verdicts(fs []lootservice.Finding) map[engine.Property]lootservice.Finding {
	out := map[engine.Property]lootservice.Finding{}
	for _, x := range fs {
		out[x.Property] = x
	}
	return out
}

const ledgerRepro = "go test ./props/loot/service -count=1 -run TestAServiceThatRedeliversUnderANewKeyFailsNoDupGrantFromTheLedger"

// TestAServiceThatRedeliversUnderANewKeyFailsNoDupGrantFromTheLedger: a
// service whose inventory client retries a timed-out delivery under a new
// idempotency key delivers a grant twice when the inventory times out
// after applying, and the judge sees it in the hosted inventory's ledger
// (the service itself shows each grant delivered once). The same service
// with no inventory fault holds every property: the failure needs the
// fault. A service that retries under the grant number holds under it.
func TestAServiceThatRedeliversUnderANewKeyFailsNoDupGrantFromTheLedger(t *testing.T) {
	if testing.Short() {
		t.Skip("three runs of about 10 s")
	}
	const repro = ledgerRepro
	none := func(lootservice.Workload) lootservice.FaultPlan { return lootservice.FaultPlan{} }
	t.Run("new-key/timeout-after-apply", func(t *testing.T) {
		fs, rec := ledgerRun(t, &sender{newKey: true}, faultWindows)
		v := verdicts(fs)
		if x := v[lootfaults.Properties.NoDupGrant]; x.Verdict != lootservice.Failed {
			t.Errorf("NoDupGrant %s (%s), want failed: the ledger has %d deliveries %v\nTo reproduce: %s", x.Verdict, x.How, len(rec.Ledger), rec.Ledger, repro)
		}
		for _, x := range fs {
			if x.Verdict == lootservice.Failed && x.Property != lootfaults.Properties.NoDupGrant && x.Property != lootfaults.Properties.NoOverGrant {
				t.Errorf("%s failed (%v): a second item of one grant explains NoDupGrant and NoOverGrant only\nTo reproduce: %s", x.Property, x.Anomalies, repro)
			}
		}
	})
	for _, c := range []struct {
		name   string
		newKey bool
		faults func(lootservice.Workload) lootservice.FaultPlan
	}{{"new-key/no-fault", true, none}, {"grant-number/timeout-after-apply", false, faultWindows}} {
		t.Run(c.name, func(t *testing.T) {
			fs, _ := ledgerRun(t, &sender{newKey: c.newKey}, c.faults)
			for _, x := range fs {
				switch {
				case x.Verdict == lootservice.Failed:
					t.Errorf("%s failed: %v\nTo reproduce: %s", x.Property, x.Anomalies, repro)
				case x.Verdict == lootservice.NotJudged && x.Property != lootfaults.Properties.Responsive:
					t.Errorf("%s not judged: %s\nTo reproduce: %s", x.Property, x.How, repro)
				}
			}
		})
	}
}

// TestGrantRowsThatDisagreeWithTheLedgerFail: a service whose grant rows
// say SUCCESS for a grant the hosted inventory never applied fails
// NoLostGrant with a sentence naming that grant; one that delivers each
// grant under a number its rows never held fails NoOverGrant naming the
// number (and NoLostGrant: the grant's own number was never applied),
// though by session and player every winner got one item, which is all
// the properties' own checks see. Nothing else fails.
func TestGrantRowsThatDisagreeWithTheLedgerFail(t *testing.T) {
	if testing.Short() {
		t.Skip("two runs of about 5 s")
	}
	const repro = "go test ./props/loot/service -count=1 -run TestGrantRowsThatDisagreeWithTheLedgerFail"
	none := func(lootservice.Workload) lootservice.FaultPlan { return lootservice.FaultPlan{} }
	// unsent marks its grants SUCCESS and sends nothing: the winners never
	// got their items. renumbered delivers every item once under keys of
	// its own (N-r): a correct service keyed another way, which the
	// cross-check by grant number must not fail (it did: NoLostGrant and
	// NoOverGrant, before a session was checked by number only where the
	// service keys by it).
	for _, c := range []struct {
		lie  string
		want map[engine.Property]string // the failing properties, each with a sentence's words
	}{
		{"unsent", map[engine.Property]string{lootfaults.Properties.NoLostGrant: "among its winners, who never got the item"}},
		{"renumbered", nil},
	} {
		t.Run(c.lie, func(t *testing.T) {
			fs, _ := ledgerRun(t, &sender{lie: c.lie}, none)
			// The sentence names the session and the player.
			names := func(a string) bool { return strings.HasPrefix(a, "x") && strings.Contains(a, "player ") }
			for _, x := range fs {
				words, want := c.want[x.Property]
				switch {
				case want && x.Verdict != lootservice.Failed:
					t.Errorf("%s %s (%s), want failed\nTo reproduce: %s", x.Property, x.Verdict, x.How, repro)
				case want && !slices.ContainsFunc(x.Anomalies, func(a string) bool { return strings.Contains(a, words) && names(a) }):
					t.Errorf("%s failed with %q, none naming a grant with %q\nTo reproduce: %s", x.Property, x.Anomalies, words, repro)
				case !want && x.Verdict == lootservice.Failed:
					t.Errorf("%s failed (%v): the lie explains only %v\nTo reproduce: %s", x.Property, x.Anomalies, slices.Collect(maps.Keys(c.want)), repro)
				}
			}
		})
	}
}

// TestRecordCarriesTheLedger: a record's ledger is written and read back
// whole, and a ledger under a header that says no inventory was hosted is
// refused (a record is not read by guessing).
func TestRecordCarriesTheLedger(t *testing.T) {
	const repro = "go test ./props/loot/service -count=1 -run TestRecordCarriesTheLedger"
	w, err := lootservice.Generate(lootfaults.Families.Clean, 2, "rl", scale, 1)
	if err != nil {
		t.Fatal(err)
	}
	rec := lootservice.Record{Run: lootservice.Run{Family: "clean", Seed: 2, Tag: w.Tag, Scale: w.Scale, Targets: []lootservice.Target{{Player: "http://p", Internal: "http://i"}},
		Schedule: lootprops.World.Format(w.Schedule), Inventory: true, Started: time.Unix(1e9, 0).UTC()}}
	rec.Ledger = []inventory.Delivery{
		{Index: 0, Key: "rl-x0:1:rl-item0", Session: "rl-x0", Player: 1, Loot: "rl-item0", Quantity: 1, At: rec.Run.Started.Add(time.Second), Outcome: inventory.Applied, Fault: inventory.TimeoutAfterApply, Status: 200},
		{Index: 1, Key: "rl-x0:1:rl-item0", Session: "rl-x0", Player: 1, Loot: "rl-item0", Quantity: 1, At: rec.Run.Started.Add(2 * time.Second), Outcome: inventory.Repeat, Status: 200},
	}
	var buf bytes.Buffer
	if err := rec.Write(&buf); err != nil {
		t.Fatal(err)
	}
	back, err := lootservice.ReadRecord("rec", bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatalf("%v; %s", err, repro)
	}
	if !back.Run.Inventory || !reflect.DeepEqual(back.Ledger, rec.Ledger) {
		t.Errorf("read back inventory=%v ledger %v, want true and %v\nTo reproduce: %s", back.Run.Inventory, back.Ledger, rec.Ledger, repro)
	}
	rec.Run.Inventory = false
	buf.Reset()
	rec.Write(&buf)
	if _, err := lootservice.ReadRecord("rec", &buf); err == nil {
		t.Errorf("a ledger under a header without the inventory was read\nTo reproduce: %s", repro)
	}
}
