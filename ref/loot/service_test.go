package loot_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/onceproof/onceproof/ref/loot"
)

func TestOpenIsIdempotentAndRefusesAnotherDefinition(t *testing.T) {
	w := newWorld(t)
	svc := w.node(loot.Config{})
	spec := loot.Spec{No: "S", Dungeon: "D", Loot: "RING-7", Quantity: 1, Deadline: t0.Add(time.Minute), Rule: loot.RuleCount, Members: []loot.PlayerID{2, 1}}
	first, err := svc.Open(t.Context(), spec)
	if err != nil {
		t.Fatal(err)
	}
	if again, err := w.node(loot.Config{}).Open(t.Context(), spec); err != nil || !again.Same(first.Spec) {
		t.Errorf("repeated Open = %v; want the recorded session", err)
	}
	other := spec
	other.Quantity = 2
	if _, err := svc.Open(t.Context(), other); !errors.Is(err, loot.ErrConflict) {
		t.Errorf("Open of the same number with another quantity = %v, want ErrConflict", err)
	}
}

func TestOpenRefusesBadSpecs(t *testing.T) {
	w := newWorld(t)
	svc := w.node(loot.Config{})
	good := loot.Spec{No: "S", Dungeon: "D", Loot: "RING-7", Quantity: 1, Deadline: t0.Add(time.Minute), Rule: loot.RuleCount, Members: []loot.PlayerID{1}}
	for name, change := range map[string]func(*loot.Spec){
		"quantity 0":           func(s *loot.Spec) { s.Quantity = 0 },
		"empty team":           func(s *loot.Spec) { s.Members = nil },
		"member twice":         func(s *loot.Spec) { s.Members = []loot.PlayerID{1, 1} },
		"member id 0":          func(s *loot.Spec) { s.Members = []loot.PlayerID{0} },
		"unknown rule":         func(s *loot.Spec) { s.Rule = "v9" },
		"no deadline":          func(s *loot.Spec) { s.Deadline = time.Time{} },
		"deadline at db now":   func(s *loot.Spec) { s.Deadline = t0 },
		"':' in the number":    func(s *loot.Spec) { s.No = "S:1" },
		"':' in the loot code": func(s *loot.Spec) { s.Loot = "RING:7" },
		"no dungeon":           func(s *loot.Spec) { s.Dungeon = "" },
		"65-byte number":       func(s *loot.Spec) { s.No = string(bytes.Repeat([]byte("n"), 65)) },
	} {
		spec := good
		change(&spec)
		if _, err := svc.Open(t.Context(), spec); !errors.Is(err, loot.ErrBadArgument) {
			t.Errorf("Open with %s = %v, want ErrBadArgument", name, err)
		}
	}
}

func TestClaimNeedsAnAuthenticatedPlayerAndAKnownIntent(t *testing.T) {
	w := newWorld(t)
	svc := w.node(loot.Config{})
	w.claiming(svc, "S", 1, loot.RuleCount, 1)
	for name, call := range map[string]func() error{
		"no caller": func() error {
			_, err := svc.Claim(t.Context(), loot.Caller{}, loot.ClaimRequest{Session: "S", Intent: loot.Need})
			return err
		},
		"unknown intent": func() error {
			_, err := svc.Claim(t.Context(), loot.Caller{Player: 1}, loot.ClaimRequest{Session: "S", Intent: "ROLL"})
			return err
		},
		"no session": func() error {
			_, err := svc.Claim(t.Context(), loot.Caller{Player: 1}, loot.ClaimRequest{Intent: loot.Need})
			return err
		},
	} {
		if err := call(); !errors.Is(err, loot.ErrBadArgument) {
			t.Errorf("Claim with %s = %v, want ErrBadArgument", name, err)
		}
	}
	if cs, _ := w.store.Claims(t.Context(), "S"); len(cs) != 0 {
		t.Errorf("refused claims were written: %v", cs)
	}
}

// TestStoreFailureIsOutcomeUnknown: a store error that is not a definite
// answer reaches the caller as ErrOutcomeUnknown with its cause; a retry
// of the same call is then safe. A definite answer is not marked unknown.
func TestStoreFailureIsOutcomeUnknown(t *testing.T) {
	w := newWorld(t)
	svc := w.node(loot.Config{Store: chaosStore{w.store, once("Claim", loseAnswer)}})
	w.claiming(svc, "S", 1, loot.RuleCount, 1)
	req := loot.ClaimRequest{Session: "S", Intent: loot.Need}
	_, err := svc.Claim(t.Context(), loot.Caller{Player: 1}, req)
	if !errors.Is(err, loot.ErrOutcomeUnknown) || !errors.Is(err, errNetwork) {
		t.Fatalf("Claim with a lost answer = %v, want ErrOutcomeUnknown wrapping the cause", err)
	}
	c, err := svc.Claim(t.Context(), loot.Caller{Player: 1}, req)
	if err != nil || c.Intent != loot.Need {
		t.Fatalf("retried Claim = %+v, %v", c, err)
	}
	if cs, _ := w.store.Claims(t.Context(), "S"); len(cs) != 1 {
		t.Errorf("claims after a lost answer and a retry: %v, want one", cs)
	}
	_, err = svc.Claim(t.Context(), loot.Caller{Player: 2}, req)
	if !errors.Is(err, loot.ErrNotMember) || errors.Is(err, loot.ErrOutcomeUnknown) {
		t.Errorf("definite refusal = %v, want ErrNotMember and not unknown", err)
	}
}

// TestLostRecordAnswerIsFinishedByRecover: RecordGrants lands and its
// answer is lost. Settle reports the outcome unknown and delivers
// nothing; after the grants' first lease Recover delivers them, once.
func TestLostRecordAnswerIsFinishedByRecover(t *testing.T) {
	w := newWorld(t)
	settler := w.node(loot.Config{Store: chaosStore{w.store, once("RecordGrants", loseAnswer)}})
	w.claiming(settler, "S", 2, loot.RuleCount, 1, 2, 3)
	for _, p := range []loot.PlayerID{1, 2, 3} {
		w.claim(settler, "S", p, loot.Need)
	}
	w.advance(claimWindow)
	if _, err := settler.Settle(t.Context(), "S"); !errors.Is(err, loot.ErrOutcomeUnknown) {
		t.Fatalf("Settle = %v, want ErrOutcomeUnknown", err)
	}
	if got := w.holders(1, 2, 3); len(got) != 0 {
		t.Fatalf("delivered %v before anyone knew the grants were recorded", got)
	}
	fresh := w.node(loot.Config{})
	if rec, _ := fresh.Recover(t.Context()); rec.Delivered != 0 {
		t.Fatalf("Recover inside the settler's lease delivered %d", rec.Delivered)
	}
	w.advance(loot.DefaultSettleLease)
	if rec, err := fresh.Recover(t.Context()); err != nil || rec.Delivered != 2 {
		t.Fatalf("Recover = %+v, %v; want 2 deliveries", rec, err)
	}
	if got := w.holders(1, 2, 3); len(got) != 2 || got[1] != 1 || got[2] != 1 {
		t.Errorf("rings held = %v, want one each for 1 and 2", got)
	}
}

// failingHistory fails every read.
type failingHistory struct{}

func (failingHistory) Fairness(context.Context, string, []loot.PlayerID) (map[loot.PlayerID]loot.Fairness, error) {
	return nil, errNetwork
}

// TestFairnessOutageIsTakenOverAfterTheLease: the settler won the CAS but
// cannot read fairness: it records nothing, and after its lease another
// node settles.
func TestFairnessOutageIsTakenOverAfterTheLease(t *testing.T) {
	w := newWorld(t)
	broken := w.node(loot.Config{Fairness: failingHistory{}})
	w.claiming(broken, "S", 1, loot.RuleCount, 1)
	w.claim(broken, "S", 1, loot.Need)
	w.advance(claimWindow)
	if _, err := broken.Settle(t.Context(), "S"); !errors.Is(err, loot.ErrOutcomeUnknown) || !errors.Is(err, errNetwork) {
		t.Fatalf("Settle with the history down = %v, want ErrOutcomeUnknown", err)
	}
	if s, _ := w.store.Session(t.Context(), "S"); s.Status != loot.StatusSettling {
		t.Fatalf("status %s, want SETTLING", s.Status)
	}
	w.advance(loot.DefaultSettleLease)
	if rec, err := w.node(loot.Config{}).Recover(t.Context()); err != nil || rec.Settled != 1 {
		t.Fatalf("Recover = %+v, %v", rec, err)
	}
	if s, _ := w.store.Session(t.Context(), "S"); s.Status != loot.StatusClosed || s.Fence != 2 {
		t.Errorf("after takeover: %s fence %d, want CLOSED fence 2", s.Status, s.Fence)
	}
}

// recordingLock records every Acquire and can fail all calls.
type recordingLock struct {
	loot.Lock
	fail   bool
	mu     sync.Mutex
	tokens []string
}

func (l *recordingLock) Acquire(ctx context.Context, key, token string, ttl time.Duration) (bool, error) {
	l.mu.Lock()
	l.tokens = append(l.tokens, token)
	l.mu.Unlock()
	if l.fail {
		return false, errNetwork
	}
	return l.Lock.Acquire(ctx, key, token, ttl)
}

func (l *recordingLock) Release(ctx context.Context, key, token string) (bool, error) {
	if l.fail {
		return false, errNetwork
	}
	return l.Lock.Release(ctx, key, token)
}

// TestSettleLeavesAHeldLockAlone: a settler that finds the lock held stops
// before the database; the lock's tokens come from the token source.
func TestSettleLeavesAHeldLockAlone(t *testing.T) {
	w := newWorld(t)
	rl := &recordingLock{Lock: w.lock}
	svc := w.node(loot.Config{Lock: rl, Tokens: bytes.NewReader(bytes.Repeat([]byte{0xab}, 64))})
	w.claiming(svc, "S", 1, loot.RuleCount, 1)
	w.advance(claimWindow)
	if ok, _ := w.lock.Acquire(t.Context(), loot.LockKey("S"), "other", time.Minute); !ok {
		t.Fatal("could not take the lock")
	}
	if _, err := svc.Settle(t.Context(), "S"); !errors.Is(err, loot.ErrAlreadySettling) {
		t.Errorf("Settle under another's lock = %v, want ErrAlreadySettling", err)
	}
	if s, _ := w.store.Session(t.Context(), "S"); s.Status != loot.StatusClaiming || s.Fence != 0 {
		t.Errorf("session %s fence %d: the settler went past a held lock", s.Status, s.Fence)
	}
	if want := hex.EncodeToString(bytes.Repeat([]byte{0xab}, 16)); !slices.Equal(rl.tokens, []string{want}) {
		t.Errorf("tokens %v, want [%s] from the token source", rl.tokens, want)
	}
}

// TestSettleGoesOnWhenTheLockServiceFails: the lock is an optimisation; the
// CAS decides.
func TestSettleGoesOnWhenTheLockServiceFails(t *testing.T) {
	w := newWorld(t)
	svc := w.node(loot.Config{Lock: &recordingLock{Lock: w.lock, fail: true}})
	w.claiming(svc, "S", 1, loot.RuleCount, 1)
	w.claim(svc, "S", 1, loot.Need)
	w.advance(claimWindow)
	if _, err := svc.Settle(t.Context(), "S"); err != nil {
		t.Fatalf("Settle with the lock service down = %v", err)
	}
	if got := w.holders(1); got[1] != 1 {
		t.Errorf("rings held %v", got)
	}
}

// TestConcurrentSettlesGrantEachItemOnce: 10 nodes, half of them without
// the lock, settle three sessions at once; every item goes out once, to
// the audited winners.
func TestConcurrentSettlesGrantEachItemOnce(t *testing.T) {
	w := newWorld(t)
	members := []loot.PlayerID{1, 2, 3, 4, 5}
	nodes := make([]*loot.Service, 10)
	for i := range nodes {
		cfg := loot.Config{}
		if i%2 == 1 {
			cfg.Lock = &recordingLock{Lock: w.lock, fail: true} // as good as no lock
		}
		nodes[i] = w.node(cfg)
	}
	sessions := []string{"A", "B", "C"}
	for _, no := range sessions {
		w.claiming(nodes[0], no, 3, loot.RuleSeeded, members...)
		for i, p := range members {
			w.claim(nodes[i], no, p, []loot.Intent{loot.Need, loot.Greed}[i%2])
		}
	}
	w.advance(claimWindow)
	var wg sync.WaitGroup
	for _, n := range nodes {
		for _, no := range sessions {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := n.Settle(context.Background(), no); err != nil && !errors.Is(err, loot.ErrAlreadySettling) && !errors.Is(err, loot.ErrAlreadySettled) {
					t.Errorf("Settle(%s): %v", no, err)
				}
			}()
		}
	}
	wg.Wait()
	total := 0
	for _, no := range sessions {
		snap, err := nodes[3].Audit(t.Context(), no)
		if err != nil {
			t.Fatalf("Audit(%s): %v", no, err)
		}
		for _, p := range members {
			want := 0
			if slices.Contains(snap.Winners, p) {
				want = 1
			}
			if got := w.store.Applied(loot.GrantNo(no, p, "RING-7")); got != want {
				t.Errorf("%s: player %d got %d rings, want %d", no, p, got, want)
			}
		}
		total += len(snap.Winners)
	}
	if total != 9 {
		t.Errorf("%d rings granted over three sessions of 3, want 9", total)
	}
}

// tamperedStore returns a snapshot whose winners are not the grants.
type tamperedStore struct{ loot.Store }

func (s tamperedStore) Grants(ctx context.Context, no string) ([]loot.Grant, error) {
	gs, err := s.Store.Grants(ctx, no)
	for i := range gs {
		gs[i].Player, gs[i].No = 2, loot.GrantNo(no, 2, gs[i].Loot)
	}
	return gs, err
}

func TestAuditFindsGrantsThatAreNotTheWinners(t *testing.T) {
	w := newWorld(t)
	svc := w.node(loot.Config{})
	w.claiming(svc, "S", 1, loot.RuleCount, 1, 2)
	w.claim(svc, "S", 1, loot.Need)
	w.advance(claimWindow)
	if _, err := svc.Settle(t.Context(), "S"); err != nil {
		t.Fatal(err)
	}
	var re *loot.ReplayError
	if _, err := w.node(loot.Config{Store: tamperedStore{w.store}}).Audit(t.Context(), "S"); !errors.As(err, &re) || re.Diff == "" {
		t.Errorf("Audit with grants to a non-winner = %v, want a *ReplayError with a diff", err)
	}
}

// TestMoreItemsThanClaimsAllocatesWhatWasClaimed: PASS never wins, even
// with items to spare; the rest stays unallocated.
func TestMoreItemsThanClaimsAllocatesWhatWasClaimed(t *testing.T) {
	w := newWorld(t)
	svc := w.node(loot.Config{})
	w.claiming(svc, "S", 3, loot.RuleCount, 1, 2, 3)
	w.claim(svc, "S", 1, loot.Need)
	w.claim(svc, "S", 2, loot.Greed)
	w.claim(svc, "S", 3, loot.Pass)
	w.advance(claimWindow)
	st, err := svc.Settle(t.Context(), "S")
	if err != nil || st.Session.Allocated != 2 || !slices.Equal(winners(st), []loot.PlayerID{1, 2}) {
		t.Errorf("Settle = %v allocated %d, %v; want [1 2] allocated 2", winners(st), st.Session.Allocated, err)
	}
}

func TestNewRefusesIncompleteConfig(t *testing.T) {
	w := newWorld(t)
	for name, cfg := range map[string]loot.Config{
		"no store":     {Inventory: w.store.Inventory(), Fairness: w.history},
		"no inventory": {Store: w.store, Fairness: w.history},
		"no fairness":  {Store: w.store, Inventory: w.store.Inventory()},
		"bad backoff":  {Store: w.store, Inventory: w.store.Inventory(), Fairness: w.history, Backoff: loot.Backoff{Base: time.Second}},
		"lease < 0":    {Store: w.store, Inventory: w.store.Inventory(), Fairness: w.history, SettleLease: -1},
	} {
		if _, err := loot.New(cfg); !errors.Is(err, loot.ErrBadArgument) {
			t.Errorf("New with %s = %v, want ErrBadArgument", name, err)
		}
	}
}
