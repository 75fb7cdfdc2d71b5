package main

import (
	"strings"
	"testing"

	"github.com/onceproof/onceproof/internal/redact/redacttest"
)

// A bad -inventory (or LOOTD_INVENTORY) is a usage error found before the
// database is dialled, and shows no password.
func TestABadInventoryURLFailsBeforeTheDatabaseIsOpened(t *testing.T) {
	for _, c := range []struct{ url, want string }{
		{"ftp://inv:S3CRETpw@127.0.0.1:1/deliveries", `scheme "ftp"`},
		{"inventory.local:8080/deliveries", "want http or https"},
		{"http://inv:S3CRETpw@/deliveries", "no host"},
		{"http://inv:S3CRET%zz@127.0.0.1:1/deliveries", "invalid URL escape"},
	} {
		for _, via := range []string{"-inventory", "LOOTD_INVENTORY"} {
			// The database refuses: had lootd dialled it first, it
			// would report that instead (exit 1).
			args, env := append([]string{"-db", "postgres://app@127.0.0.1:1/game", "-inventory", c.url}, listeners...), map[string]string(nil)
			if via == "LOOTD_INVENTORY" {
				args, env = append([]string{"-db", "postgres://app@127.0.0.1:1/game"}, listeners...), map[string]string{"LOOTD_INVENTORY": c.url}
			}
			code, printed := runFails(t, args, env)
			if code != 2 || !strings.Contains(printed, c.want) || !strings.Contains(printed, "-inventory") || strings.Contains(printed, redacttest.Marker) {
				t.Errorf("%s %s: exit %d, printed %q; want exit 2 naming -inventory, %q, no password; reproduce: go test ./cmd/lootd -run '^%s$'", via, c.url, code, printed, c.want, t.Name())
			}
		}
	}
}

// -inventory's connections (one per settle worker and the compensation
// pass's) come out of the players' share of RLIMIT_NOFILE, as the
// database's and Redis's pools do.
func TestInventoryConnectionsComeOutOfThePlayersShare(t *testing.T) {
	c := config{dbConns: 64}
	without, err := capsFor(10000, c, 0)
	if err != nil {
		t.Fatal(err)
	}
	c.inventory = "http://127.0.0.1:1/deliveries"
	with, err := capsFor(10000, c, 0)
	if err != nil {
		t.Fatal(err)
	}
	if want := settleWorkers(64) + 1; without.player-with.player != want {
		t.Errorf("-inventory takes %d of the players' connections, want %d (settle workers + compensation); reproduce: go test ./cmd/lootd -run '^%s$'", without.player-with.player, want, t.Name())
	}
}
