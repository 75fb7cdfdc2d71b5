package sqlite

import (
	"database/sql"
	"errors"
	"testing"
	"time"

	"github.com/onceproof/onceproof/ref"
	"github.com/onceproof/onceproof/ref/storetest"
)

// The requests the multi-node test settles, and the checks of the ledger
// it ends with.

// crashBase is the virtual clock: request n is settled at crashBase + n ms.
var crashBase = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// crashKey and crashPayload are storetest's crash requests: the payload
// credits account n%5 with n+1, so a double credit shows in the sums.
func crashKey(n int) ref.Key    { return storetest.CrashKey(n) }
func crashPayload(n int) []byte { return storetest.CrashPayload(n) }

// verifier reads a file's records, ledger and balances directly.
type verifier struct {
	store *Store
	sink  *Sink
}

func (v *verifier) state(t *testing.T, k ref.Key) ref.State {
	t.Helper()
	kb := k.Bytes()
	var st int64
	err := v.store.DB().QueryRow(`SELECT state FROM onceproof_records WHERE key = ?`, kb[:]).Scan(&st)
	if errors.Is(err, sql.ErrNoRows) {
		return ref.StateNew
	}
	if err != nil {
		t.Fatalf("read state of %v: %v", k, err)
	}
	return ref.State(st)
}

func (v *verifier) inLedger(t *testing.T, k ref.Key) bool {
	t.Helper()
	_, ok, err := v.sink.Applied(t.Context(), k)
	if err != nil {
		t.Fatalf("Applied(%v): %v", k, err)
	}
	return ok
}

func (v *verifier) checkBalancesMatchLedger(t *testing.T) {
	t.Helper()
	gs, err := v.sink.Grants(t.Context())
	if err != nil {
		t.Fatalf("Grants: %v", err)
	}
	want := map[string]int64{}
	for _, g := range gs {
		account, amount, err := parseCredit(g.Payload)
		if err != nil {
			t.Fatal(err)
		}
		want[account] += amount
	}
	rows, err := v.store.DB().Query(`SELECT account, amount FROM balances`)
	if err != nil {
		t.Fatalf("read balances: %v", err)
	}
	defer rows.Close()
	got := map[string]int64{}
	for rows.Next() {
		var a string
		var m int64
		if err := rows.Scan(&a, &m); err != nil {
			t.Fatalf("scan balance: %v", err)
		}
		got[a] = m
	}
	for a := range mergeKeys(want, got) {
		if got[a] != want[a] {
			t.Fatalf("balance of %s = %d, the ledger's grants sum to %d: a credit and its grant key were not written together", a, got[a], want[a])
		}
	}
}

func mergeKeys(a, b map[string]int64) map[string]bool {
	m := map[string]bool{}
	for k := range a {
		m[k] = true
	}
	for k := range b {
		m[k] = true
	}
	return m
}

// checkExactlyOnce: the ledger holds each of the n requests exactly once
// with its own payload, the balances are the sums of one credit each, and
// every record is Delivered.
func (v *verifier) checkExactlyOnce(t *testing.T, n int) {
	t.Helper()
	gs, err := v.sink.Grants(t.Context())
	if err != nil {
		t.Fatalf("Grants: %v", err)
	}
	seen := map[ref.Key]bool{}
	for _, g := range gs {
		if seen[g.Key] {
			t.Fatalf("grant %v is in the ledger twice", g.Key)
		}
		seen[g.Key] = true
	}
	want := map[string]int64{}
	for i := 0; i < n; i++ {
		k := crashKey(i)
		p, ok, err := v.sink.Applied(t.Context(), k)
		if err != nil || !ok || string(p) != string(crashPayload(i)) {
			t.Fatalf("request %d: ledger has %q (applied=%v, err %v), want %q exactly once", i, p, ok, err, crashPayload(i))
		}
		if st := v.state(t, k); st != ref.StateDelivered {
			t.Fatalf("request %d: record %v after recovery, want Delivered", i, st)
		}
		account, amount, _ := parseCredit(crashPayload(i))
		want[account] += amount
	}
	if len(gs) != n {
		t.Fatalf("ledger holds %d grants, want %d", len(gs), n)
	}
	v.checkBalancesMatchLedger(t)
	for a, m := range want {
		var got int64
		if err := v.store.DB().QueryRow(`SELECT amount FROM balances WHERE account = ?`, a).Scan(&got); err != nil || got != m {
			t.Fatalf("balance of %s = %d (%v), want %d: a request was credited twice or never", a, got, err, m)
		}
	}
}
