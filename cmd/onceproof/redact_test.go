package main

import (
	"strings"
	"testing"

	rt "github.com/onceproof/onceproof/internal/redact/redacttest"
)

// Every secret form of redacttest (the table cmd/lootd's -db and -redis
// run too) given to each flag that takes an address: what onceproof prints
// names the host and never the password. Each address refuses at once (port
// 1 on loopback) or does not parse, so every run fails before a matrix.
func TestStoreAndLockErrorsShowTheHostNotThePassword(t *testing.T) {
	flags := map[rt.Kind][][]string{
		rt.Postgres: {{"-store"}, {"-subject", "loot", "-store"}},
		rt.KeyValue: {{"-store"}, {"-subject", "loot", "-store"}},
		rt.MySQL:    {{"-store"}, {"-subject", "loot", "-store"}},
		rt.DSN:      {{"-store"}, {"-subject", "loot", "-store"}},
		rt.Redis:    {{"-store"}, {"-subject", "loot", "-lock"}},
	}
	for _, c := range rt.Cases {
		for _, flag := range flags[c.Kind] {
			args := append([]string{"matrix", "-families", "clean", "-n", "1", "-out", t.TempDir()}, flag...)
			args = append(args, c.Addr)
			code, stdout, stderr := runCLI(args...)
			if p := c.Problem(stdout + stderr); p != "" || code == exitOK {
				t.Errorf("%s: onceproof %s: exit %d, %s:\n%s%s", c.Name, strings.Join(args, " "), code, p, stdout, stderr)
			}
		}
	}
}

// An address given to a flag that does not take one, or as an argument, is
// quoted in the usage error without its password.
func TestAMisplacedAddressShowsNoPassword(t *testing.T) {
	for _, c := range rt.Cases {
		for _, args := range [][]string{{"matrix", "-n", c.Addr}, {"matrix", c.Addr}, {"replay", c.Addr, "-design", c.Addr}} {
			code, stdout, stderr := runCLI(args...)
			if p := c.Problem(stdout + stderr); p != "" || code != exitBadUse {
				t.Errorf("%s: onceproof %s: exit %d, %s:\n%s%s\nwant exit %d, no password", c.Name, strings.Join(args, " "), code, p, stdout, stderr, exitBadUse)
			}
		}
	}
}
