package lootservice_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/onceproof/onceproof/internal/testkit/testserver"
	"github.com/onceproof/onceproof/props/loot/service/lootdproc"
)

// campaignFamilies are CI's campaign: the families with a fault the
// harness reaches here (crash: kill -9 and restart or a reset;
// timeout-after-success: a reply cut; store-error: a partition;
// lock-expiry: SIGSTOP past the lock's ttl, a stall) and three that need none (an outsider,
// a cancel racing the settle, ties), so a run judges every property.
var campaignFamilies = []string{"crash", "timeout-after-success", "store-error", "lock-expiry", "outsider", "cancel-race", "ties"}

// campaignEnv turns TestServiceCampaign on (make service-campaign): it
// runs minutes, and the tests above already cover what it proves in
// process; it is the command line a user types, run end to end.
const campaignEnv = "ONCEPROOF_SERVICE_CAMPAIGN"

// TestServiceCampaign runs the real `onceproof service -start` binary
// against three lootd it starts on PostgreSQL + Redis, then three on
// MariaDB (throwaway servers), with the faults the harness reaches there
// (network proxies in front of each instance, kill -9 and SIGSTOP of the
// instances it started), and
// prints each summary. SERVICE_RUNS runs each (default: campaignFamilies,
// each once).
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
	for _, c := range []struct {
		name string
		args []string
		db   string
	}{
		{"postgres+redis", []string{"-db", pg, "-redis", testserver.Redis(t).URL() + "/0", "-redis-prefix", testserver.RedisPrefix(t)}, pg},
		{"mariadb", []string{"-db", mariaURL}, mariaURL},
	} {
		// No hosted inventory here (-inventory-listen): lootd delivering to
		// it writes no loot_inventory rows, and the judge reads deliveries
		// from the database (the spec's items query), not yet from the
		// hosted inventory's ledger, so every winner would look undelivered.
		// TestLootdDevHoldsUnderNetworkAndInventoryFaults and the
		// ...UnderKillStopAndRestart tests cover the inventory's faults.
		cmd := exec.Command(bin, "service", "-start", strings.Join(lootdproc.Command(t, c.args...), " "), "-instances", "3",
			"-ready", "http://127.0.0.1:{internal}/healthz", "-db", c.db, "-n", strconv.Itoa(runs), "-out", t.TempDir(),
			"-family", strings.Join(campaignFamilies, ","))
		out, err := cmd.CombinedOutput()
		t.Logf("onceproof service against 3 lootd on %s:\n%s", c.name, out)
		if err != nil {
			t.Errorf("onceproof service against lootd on %s: %v\nTo reproduce: make service-campaign", c.name, err)
		}
	}
}
