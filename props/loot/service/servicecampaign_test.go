package lootservice_test

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/onceproof/onceproof/internal/testkit/testserver"
	lootservice "github.com/onceproof/onceproof/props/loot/service"
	"github.com/onceproof/onceproof/props/loot/service/inventory"
	"github.com/onceproof/onceproof/props/loot/service/lootdproc"
)

// campaignFamilies are CI's campaign: the families with a fault the
// harness reaches here (crash: kill -9 and restart or a reset;
// timeout-after-success: the inventory timing out after it applied or
// losing its reply, a reply cut; store-error: the inventory failing, a
// partition; lock-expiry: SIGSTOP past the lock's ttl, a stall) and three
// that need none (an outsider, a cancel racing the settle, ties), so a run
// judges every property.
var campaignFamilies = []string{"crash", "timeout-after-success", "store-error", "lock-expiry", "outsider", "cancel-race", "ties"}

// campaignEnv turns TestServiceCampaign on (make service-campaign): it
// runs minutes, and the tests above already cover what it proves in
// process; it is the command line a user types, run end to end.
const campaignEnv = "ONCEPROOF_SERVICE_CAMPAIGN"

// campaignLockTTL is lootd's -lock-ttl here, and the harness's: its
// SIGSTOP lasts it plus a settle pass (3 s), where lootd's 30 s default
// would stop an instance for 31 s a time and double the campaign.
const campaignLockTTL = "2s"

// TestServiceCampaign runs the real `onceproof service -start` binary
// against three lootd it starts on PostgreSQL + Redis, then three on
// MariaDB (throwaway servers), delivering to the inventory the harness
// hosts, with the faults the harness reaches there (network proxies in
// front of each instance, the hosted inventory's, kill -9 and SIGSTOP of
// the instances it started), and prints each summary; every judged
// property must hold, deliveries judged from the inventory's ledger, and
// the inventory's faults must have been applied. SERVICE_RUNS runs each
// (default: campaignFamilies, each once).
func TestServiceCampaign(t *testing.T) {
	if os.Getenv(campaignEnv) == "" {
		t.Skip(campaignEnv + " is not set (make service-campaign sets it)")
	}
	runs := len(campaignFamilies)
	if s := os.Getenv("SERVICE_RUNS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("SERVICE_RUNS=%q: want a count >= 1", s)
		}
		runs = n
	}
	bin := filepath.Join(t.TempDir(), "onceproof")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/onceproof/onceproof/cmd/onceproof").CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/onceproof: %v\n%s", err, out)
	}
	pg := testserver.Postgres(t)
	maria := testserver.MariaDB(t) // go-sql-driver's form: user:pass@tcp(host:port)/db
	mariaURL := "mysql://" + strings.Replace(strings.Replace(maria, "@tcp(", "@", 1), ")/", "/", 1)
	// failures are restated last: CI shows a failed test's tail, which is
	// the second summary, whichever campaign failed.
	var failures []string
	fail := func(format string, args ...any) {
		msg := fmt.Sprintf(format, args...)
		t.Error(msg + "\nTo reproduce: make service-campaign")
		failures = append(failures, msg)
	}
	defer func() {
		if len(failures) > 0 {
			t.Errorf("the campaign failed, %d finding(s):\n%s\nTo reproduce: make service-campaign", len(failures), strings.Join(failures, "\n"))
		}
	}()
	for _, c := range []struct {
		name string
		args []string
		db   string
	}{
		{"postgres+redis", []string{"-db", pg, "-redis", testserver.Redis(t).URL() + "/0", "-redis-prefix", testserver.RedisPrefix(t)}, pg},
		{"mariadb", []string{"-db", mariaURL}, mariaURL},
	} {
		args := append(c.args, "-inventory", "{inventory}", "-lock-ttl", campaignLockTTL)
		dir := t.TempDir()
		cmd := exec.Command(bin, "service", "-start", strings.Join(lootdproc.Command(t, args...), " "), "-instances", "3",
			"-ready", "http://127.0.0.1:{internal}/healthz", "-db", c.db, "-n", strconv.Itoa(runs), "-out", dir,
			"-family", strings.Join(campaignFamilies, ","), "-inventory-listen", freeAddr(t), "-lock-ttl", campaignLockTTL)
		began := time.Now()
		out, err := cmd.CombinedOutput()
		t.Logf("onceproof service against 3 lootd on %s (%v):\n%s", c.name, time.Since(began).Round(time.Second), out)
		if err != nil {
			fail("onceproof service against lootd on %s: %v\n%s", c.name, err, failedPart(string(out)))
		}
		// The families above plan these whenever runs reach them (the
		// default count runs each once); with -db too, the summary says
		// which source deliveries were judged from.
		for _, want := range []string{"from the deliveries in the hosted inventory's ledger", "the database's inventory rows were read and not used", "inv-timeout-after-apply", "inv-fail"} {
			if runs >= len(campaignFamilies) && !strings.Contains(string(out), want) {
				fail("against lootd on %s the summary does not say %q", c.name, want)
			}
		}
		if n := appliedIn(t, dir); n == 0 {
			fail("against lootd on %s no record's ledger holds an item applied: the campaign judged no delivery", c.name)
		} else {
			t.Logf("%d items applied by the hosted inventory over the runs' ledgers", n)
		}
	}
}

// failedPart is what of a service summary out says why it failed: each
// FAILED property with its runs and anomalies (the indented lines under
// it), or, when no property failed (the command's error: a run that could
// not be driven), its last lines.
func failedPart(out string) string {
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	var keep []string
	in := false
	for _, l := range lines {
		switch {
		case strings.Contains(l, " FAILED in "):
			in = true
		case !strings.HasPrefix(l, " "):
			in = false
		}
		if in {
			keep = append(keep, l)
		}
	}
	if len(keep) == 0 {
		keep = lines[max(0, len(lines)-8):]
	}
	return strings.Join(keep, "\n")
}

// appliedIn counts the items the ledgers of dir's records say the
// inventory applied.
func appliedIn(t *testing.T, dir string) int {
	files, _ := filepath.Glob(filepath.Join(dir, "run*.jsonl"))
	n := 0
	for _, file := range files {
		f, err := os.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		rec, err := lootservice.ReadRecord(file, f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range rec.Ledger {
			if d.Outcome == inventory.Applied {
				n++
			}
		}
	}
	return n
}

// freeAddr is a loopback host:port free a moment ago, for the hosted
// inventory (the service's instances are told it before it listens).
func freeAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
