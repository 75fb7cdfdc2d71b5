package sqlite

import (
	"database/sql"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/onceproof/onceproof/ref"
)

// The requests the crash and multi-node tests settle, and the checks of the
// ledger they end with.

// crashOp is the Op of the crash and multi-node tests' keys.
const crashOp = ref.Op(0xc4a54)

// crashBase is the virtual clock of the child: request n is settled at
// crashBase + n ms, so its lease (ref.DefaultLease) ends 30s later.
var crashBase = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func crashKey(n int) ref.Key { return ref.KeyOf(crashOp, uint64(n)) }

// crashPayload credits account n%5 with n+1, so every request moves a
// balance by a different amount and a double credit shows in the sums.
func crashPayload(n int) []byte { return fmt.Appendf(nil, "acct%d %d", n%5, n+1) }

// verifier is the "new process" that recovers after the kill: a fresh
// Store, Sink and Settler on the same file.
type verifier struct {
	store   *Store
	sink    *Sink
	settler *ref.Settler
}

// openVerifier opens path as a fresh process would, with the sink form
// ("atomic" or "separate") the crashed child used.
func openVerifier(t *testing.T, path, sinkForm string) *verifier {
	t.Helper()
	store := openStore(t, path)
	var ok string
	if err := store.DB().QueryRow(`PRAGMA integrity_check`).Scan(&ok); err != nil || ok != "ok" {
		t.Fatalf("integrity_check after SIGKILL = %q, %v", ok, err)
	}
	credit := creditEffect(t, store.DB())
	sink := store.Sink(credit)
	if sinkForm == "separate" {
		var err error
		if sink, err = OpenSink(path, credit); err != nil {
			t.Fatalf("OpenSink: %v", err)
		}
		t.Cleanup(func() { sink.Close() })
	}
	return &verifier{store: store, sink: sink, settler: ref.NewSettler(ref.NewWindow(time.Minute, 4), store, ref.WithSink(sink))}
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

// checkDurable: right after the kill, before any recovery, every acked
// request is in the ledger; every Delivered record is too; and the balances
// equal the ledger's sum, so no credit landed without its grant key or the
// other way round.
func (v *verifier) checkDurable(t *testing.T, acked map[int]bool) {
	t.Helper()
	for n := range acked {
		if !v.inLedger(t, crashKey(n)) {
			t.Fatalf("request %d was acked but its grant is not in the ledger after SIGKILL", n)
		}
	}
	rows, err := v.store.DB().Query(`SELECT key FROM onceproof_records WHERE state = 2`)
	if err != nil {
		t.Fatalf("list delivered records: %v", err)
	}
	var delivered []ref.Key
	for rows.Next() {
		var kb []byte
		if err := rows.Scan(&kb); err != nil {
			t.Fatalf("scan: %v", err)
		}
		delivered = append(delivered, ref.KeyFromBytes([16]byte(kb)))
	}
	rows.Close()
	for _, k := range delivered {
		if !v.inLedger(t, k) {
			t.Fatalf("record %v is Delivered but its grant is not in the ledger", k)
		}
	}
	v.checkBalancesMatchLedger(t)
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

// recoverAndResend runs Recover far past every lease, then re-sends every
// request that was not acked (the sender's retry). It returns what Recover
// completed.
func (v *verifier) recoverAndResend(t *testing.T, acked map[int]bool, n int) int {
	t.Helper()
	later := crashBase.Add(time.Hour)
	done, err := v.settler.Recover(t.Context(), later)
	if err != nil {
		t.Fatalf("Recover: %v", err)
	}
	if recs, err := v.store.Pending(t.Context(), later, 1); err != nil || len(recs) != 0 {
		t.Fatalf("after Recover Pending = %d records, %v; want none", len(recs), err)
	}
	for i := 0; i < n; i++ {
		if acked[i] {
			continue
		}
		res, err := v.settler.Apply(t.Context(), crashKey(i), crashPayload(i), later)
		if err != nil || res.State != ref.StateDelivered {
			t.Fatalf("re-send of request %d = %+v, %v; want Delivered", i, res, err)
		}
	}
	return done
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
