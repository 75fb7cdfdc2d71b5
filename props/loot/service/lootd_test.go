package lootservice_test

import (
	"testing"

	"github.com/onceproof/onceproof/internal/testkit/testserver"
	lootservice "github.com/onceproof/onceproof/props/loot/service"
	"github.com/onceproof/onceproof/props/loot/service/lootdproc"
)

func TestMain(m *testing.M) { testserver.Main(m) }

// startLootd runs lootd with args, players named by X-Player-Id (the
// default spec's auth), until t ends.
func startLootd(t *testing.T, args ...string) lootservice.Target {
	t.Helper()
	p, i := lootdproc.Start(t, args...)
	return lootservice.Target{Player: p, Internal: i}
}
