package mysql

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/onceproof/onceproof/ref/loot"
)

// A burst of concurrent claims on a store with Options.Batch (landed,
// repeated in the burst, refused for each reason a claim can be) gets, key
// by key, the answers the same claims get sent alone one after another on
// a twin database, and leaves the same claims on record; and some of the
// burst was coalesced. Run it under -race.
func TestBatchedClaimsInABurstAnswerAsAlone(t *testing.T) {
	reproduce := "; reproduce: ONCEPROOF_REQUIRE_SERVICES=1 go test -race ./ref/loot/mysql -run '^" + t.Name() + "$'"
	var qs []claimReq
	for p := range loot.PlayerID(48) {
		qs = append(qs, claimReq{"S-OPEN", p + 1, loot.Need}) // 2 a repeat of the claim before
	}
	for p := range loot.PlayerID(8) {
		qs = append(qs, claimReq{"S-OPEN", p + 1, loot.Need}) // again in the burst, the same intent
	}
	for range 2 {
		qs = append(qs, claimReq{"S-OPEN", openTeam + 1, loot.Need}, claimReq{"S-LATE", 1, loot.Need},
			claimReq{"S-SETTLING", 1, loot.Need}, claimReq{"S-NEW", 1, loot.Greed},
			claimReq{"S-NONE", 1, loot.Pass}, claimReq{"S-CANCELED", 1, loot.Need})
	}
	batched, calls := claimWorld(t, true)
	single, _ := claimWorld(t, false)
	claim := func(s *Store, q claimReq) string {
		c, created, err := s.Claim(t.Context(), q.no, q.p, q.in)
		return fmt.Sprintf("%+v %v %v", c, created, err)
	}
	got := make([]string, len(qs))
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i, q := range qs {
		wg.Go(func() {
			<-start
			got[i] = claim(batched, q)
		})
	}
	close(start)
	wg.Wait()
	// Key by key, as multisets: of two claims of one key in the burst, which
	// one is first is the scheduler's, and only the first is a first claim.
	byKey := func(answers func(i int) string) map[claimKey][]string {
		m := map[claimKey][]string{}
		for i, q := range qs {
			k := claimKey{q.no, q.p}
			m[k] = append(m[k], answers(i))
		}
		for _, as := range m {
			slices.Sort(as)
		}
		return m
	}
	batchedByKey := byKey(func(i int) string { return got[i] })
	for k, want := range byKey(func(i int) string { return claim(single, qs[i]) }) {
		if !slices.Equal(batchedByKey[k], want) {
			t.Errorf("claims of %q by %d in the burst = %q\nalone one after another = %q%s", k.no, k.p, batchedByKey[k], want, reproduce)
		}
	}
	if calls.batched.Load() == 0 {
		t.Errorf("a burst of %d concurrent claims sent %s CALLs: none coalesced%s", len(qs), calls, reproduce)
	}
	sameClaims(t, batched, single, reproduce, "S-OPEN", "S-LATE", "S-SETTLING", "S-NEW", "S-CANCELED")
}

// A settle racing a burst of batched claims across the deadline, on the
// database's clock: every claim answered accepted is in the settle's
// frozen claims as it was answered (none landed after the CAS, and none of
// them is lost: the FrozenClaims property), every claim refused is not, and
// the claims on record after the burst are the frozen ones.
func TestSettleRacingBatchedClaimsFreezesEveryAcceptedClaim(t *testing.T) {
	reproduce := "; reproduce: ONCEPROOF_REQUIRE_SERVICES=1 go test -race ./ref/loot/mysql -run '^" + t.Name() + "$'"
	ctx := t.Context()
	s, now := openAtNow(t, "", Options{Batch: true})
	// The claims must run on both sides of the deadline: 64 callers claim
	// fresh players until refused. At the 5,000-15,000 claims/s the
	// benchmarks measure, a team of 20,000 outlasts a deadline 1 s away
	// (Open's one INSERT of the team and StartClaiming take part of it);
	// a burst that ends before the deadline fails below, saying so.
	const callers, team = 64, 20000
	members := make([]loot.PlayerID, team)
	for i := range members {
		members[i] = loot.PlayerID(i + 1)
	}
	sess, _, err := s.Open(ctx, loot.Spec{No: "S", Dungeon: "D", Loot: "L", Quantity: 1,
		Deadline: now.Add(time.Second), Rule: loot.RuleCount, Members: members})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.StartClaiming(ctx, sess.No); err != nil {
		t.Fatal(err)
	}
	var (
		mu       sync.Mutex
		accepted = map[loot.PlayerID]loot.Claim{}
		refused  []loot.PlayerID
		wg       sync.WaitGroup
	)
	for g := range callers {
		wg.Go(func() {
			for p := loot.PlayerID(g + 1); p <= team; p += callers {
				c, _, err := s.Claim(ctx, sess.No, p, loot.Need)
				mu.Lock()
				switch {
				case err == nil:
					accepted[p] = c
				case errors.Is(err, loot.ErrClaimsClosed):
					refused = append(refused, p)
				default:
					t.Errorf("claim by %d: %v%s", p, err, reproduce)
				}
				mu.Unlock()
				if err != nil {
					return
				}
			}
		})
	}
	var fz loot.Frozen
	for {
		if fz, err = s.BeginSettle(ctx, sess.No, time.Minute); !errors.Is(err, loot.ErrNotDue) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	wg.Wait()
	if err != nil {
		t.Fatalf("BeginSettle: %v%s", err, reproduce)
	}
	if len(accepted) == 0 || len(refused) == 0 {
		t.Fatalf("%d claims accepted, %d refused: the burst did not cross the deadline, so it raced nothing%s", len(accepted), len(refused), reproduce)
	}
	frozen := map[loot.PlayerID]loot.Claim{}
	for _, c := range fz.Claims {
		frozen[c.Player] = c
	}
	for p, c := range accepted {
		if f, ok := frozen[p]; !ok || !f.At.Equal(c.At) || f.Intent != c.Intent {
			t.Errorf("claim by %d answered accepted as %+v; frozen: %+v (%v)%s", p, c, f, ok, reproduce)
		}
	}
	for _, p := range refused {
		if f, ok := frozen[p]; ok {
			t.Errorf("claim by %d answered refused, yet frozen as %+v%s", p, f, reproduce)
		}
	}
	if len(frozen) != len(accepted) {
		t.Errorf("%d claims frozen, %d answered accepted%s", len(frozen), len(accepted), reproduce)
	}
	onRecord, err := s.Claims(ctx, sess.No)
	if err != nil {
		t.Fatal(err)
	}
	if len(onRecord) != len(fz.Claims) {
		t.Errorf("%d claims on record after the burst, %d frozen: a claim landed after the CAS%s", len(onRecord), len(fz.Claims), reproduce)
	}
	t.Logf("%d claims accepted and frozen, %d refused", len(accepted), len(refused))
}
