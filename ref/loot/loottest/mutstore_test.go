package loottest_test

import (
	"cmp"
	"context"
	"errors"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/onceproof/onceproof/ref/loot"
	"github.com/onceproof/onceproof/ref/loot/memory"
)

// The store mutations. Each breaks one clause; the wrapper keeps what the
// broken store would have written that the memory store refuses (a late
// claim, a status it should not reach, a partial batch) in an overlay that
// its reads merge in, so the suite sees the broken store's records.
const (
	mutNone                    mutation = ""
	mutOpenOverwrites          mutation = "open-overwrites"              // a second Open replaces the spec
	mutOpenLosesMember         mutation = "open-loses-a-member"          // the member snapshot is not all written
	mutFrozenOmitsPass         mutation = "settle-frozen-omits-pass"     // the CAS hands back only claims that can win
	mutCancelRepeatRefused     mutation = "cancel-repeat-refused"        // a retried Cancel is an error
	mutRecordIgnoresCancel     mutation = "record-ignores-cancel"        // a canceled session still gets grants
	mutClockLags               mutation = "store-clock-lags"             // judges by a clock 1s behind the database's
	mutClockLeads              mutation = "store-clock-leads"            // judges by a clock 1s ahead
	mutStartReopens            mutation = "start-claiming-reopens"       // SETTLING/CLOSED -> CLAIMING
	mutCancelVoidsClosed       mutation = "cancel-voids-closed"          // CLOSED -> CANCELED
	mutClaimDeadlineInclusive  mutation = "claim-deadline-inclusive"     // deadline_at >= NOW(6)
	mutSettleDeadlineExclusive mutation = "settle-deadline-exclusive"    // deadline_at < NOW(6)
	mutClaimInserts            mutation = "claim-inserts-not-upserts"    // no unique key on (session, player)
	mutClaimRetryMovesTime     mutation = "claim-retry-moves-time"       // an identical retry takes now
	mutClaimChangeKeepsTime    mutation = "claim-change-keeps-time"      // the source document's upsert: created_at kept
	mutClaimNoMembership       mutation = "claim-membership-unchecked"   // the source document's code
	mutClaimNoStatus           mutation = "claim-status-unchecked"       // claims outside CLAIMING
	mutClaimCheckThenWrite     mutation = "claim-check-then-write"       // checked, then written later
	mutCASNotExclusive         mutation = "settle-cas-not-exclusive"     // every settler wins
	mutNoTakeover              mutation = "settle-lease-never-ends"      // a dead settler's session stays stuck
	mutFenceIgnored            mutation = "record-ignores-fence"         // a stale settler writes
	mutRecordPartial           mutation = "record-not-all-or-nothing"    // grants inserted one by one
	mutRecordRetryInserts      mutation = "record-retry-inserts-again"   // no unique grant number
	mutRecordAnswersNoLease    mutation = "record-answers-without-lease" // a close answered from the session as opened
	mutLeaseSuccess            mutation = "lease-returns-success"        // SUCCESS compensated again
	mutMarkUnknownNil          mutation = "mark-unknown-nil"             // MarkDelivered of nothing is nil
	mutLeaseShared             mutation = "lease-not-exclusive"          // ignores live leases
	mutLeaseNoBackoff          mutation = "lease-no-backoff"             // every lease is Base long
	mutLeaseNoLimit            mutation = "lease-ignores-limit"
	mutCancelCheckThenWrite    mutation = "cancel-check-then-write" // races RecordGrants
	mutOverdueMissesSettling   mutation = "overdue-misses-stalled-settlers"
	mutDeletesCanceled         mutation = "deletes-canceled-sessions"
	mutDeletesDelivered        mutation = "deletes-delivered-grants"
	mutDeletesPass             mutation = "deletes-pass-claims"
	mutTimesNotUTC             mutation = "times-not-utc"
	mutClaimSeconds            mutation = "claim-times-in-seconds" // the source document's DATETIME
	mutSnapshotLossy           mutation = "snapshot-drops-fairness"
	mutIgnoresContext          mutation = "ignores-context"
	mutNotShared               mutation = "handles-not-shared" // each Open a fresh store
	mutInventoryTwice          mutation = "inventory-not-idempotent"
	mutInventoryBatchTwice     mutation = "inventory-batch-not-idempotent" // a redelivered batch applies again
)

// mutData is the overlay every handle of one harness shares.
type mutData struct {
	mu       sync.Mutex
	status   map[string]loot.Status                  // a status the memory store refused to set
	spec     map[string]loot.Spec                    // a spec a second Open overwrote
	claims   map[string]map[loot.PlayerID]loot.Claim // claims the memory store refused to write
	rows     map[string][]loot.Claim                 // every claim write, for claim-inserts-not-upserts
	grants   map[string][]loot.Grant                 // grant rows beyond the memory store's
	sessions map[string]bool                         // every session opened
	applied  map[string]int                          // inventory-not-idempotent's ledger; the batch mutant's extra applications
}

func newMutData() *mutData {
	return &mutData{
		status: map[string]loot.Status{}, spec: map[string]loot.Spec{}, claims: map[string]map[loot.PlayerID]loot.Claim{},
		rows: map[string][]loot.Claim{}, grants: map[string][]loot.Grant{}, sessions: map[string]bool{}, applied: map[string]int{},
	}
}

func (d *mutData) appliedOf(no string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.applied[no]
}

func (d *mutData) setStatus(no string, st loot.Status) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.status[no] = st
}

func (d *mutData) putClaim(c loot.Claim) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.claims[c.Session] == nil {
		d.claims[c.Session] = map[loot.PlayerID]loot.Claim{}
	}
	d.claims[c.Session][c.Player] = c
}

func (d *mutData) addGrants(no string, gs ...loot.Grant) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.grants[no] = append(d.grants[no], gs...)
}

func (d *mutData) sessionNos() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Sorted(maps.Keys(d.sessions))
}

// mutStore is the memory store unless m says which clause to break.
type mutStore struct {
	*memory.Store
	m     mutation
	d     *mutData
	clock *memory.Clock // the harness's (the database's) clock
}

var _ loot.Store = (*mutStore)(nil)

// c is the context the inner store gets.
func (s *mutStore) c(ctx context.Context) context.Context {
	if s.m == mutIgnoresContext {
		return context.Background()
	}
	return ctx
}

func (s *mutStore) now() time.Time { return loot.StoreTime(s.clock.Now()) }

// pause lets the other goroutines of a race run between a check and the
// write it guards.
func pause() { time.Sleep(2 * time.Millisecond) }

// awaitOtherWrite holds a check-then-write between its check and its
// write until another writer moves the session off the status the check
// saw: the widest window such a race has, so the mutant shows its race
// whenever its check came first, however loaded the machine. (A fixed
// pause did not: on a loaded CI runner the settler it raced did not run
// within 2 ms.)
func (s *mutStore) awaitOtherWrite(ctx context.Context, no string, seen loot.Status) {
	await(func() bool {
		cur, err := s.Store.Session(ctx, no)
		return err != nil || cur.Status != seen
	})
}

// await polls cond until it holds, for a mutant that holds a race's
// window open until the other side has acted. It gives up after a second,
// when the other side never acts: every check racing such a mutant has
// its other side done in microseconds. Polling every 50 µs keeps the
// write within a poll of the other side's (far inside the 2 ms the fixed
// pause gave) at no more than 20,000 cheap reads in the worst second.
func await(cond func() bool) {
	for end := time.Now().Add(time.Second); !cond() && time.Now().Before(end); {
		time.Sleep(50 * time.Microsecond)
	}
}

func (s *mutStore) Open(ctx context.Context, spec loot.Spec) (loot.Session, bool, error) {
	sess, created, err := s.Store.Open(s.c(ctx), spec)
	if err == nil {
		s.d.mu.Lock()
		s.d.sessions[spec.No] = true
		if s.m == mutOpenOverwrites && !created {
			s.d.spec[spec.No] = spec
		}
		s.d.mu.Unlock()
	}
	return s.view(sess), created, err
}

// view applies the overlay to a session the memory store returned.
func (s *mutStore) view(sess loot.Session) loot.Session {
	s.d.mu.Lock()
	if st, ok := s.d.status[sess.No]; ok {
		sess.Status = st
	}
	if sp, ok := s.d.spec[sess.No]; ok {
		sess.Spec = sp
	}
	if s.m == mutOpenLosesMember && len(sess.Members) > 1 {
		sess.Members = sess.Members[:len(sess.Members)-1]
	}
	s.d.mu.Unlock()
	if s.m == mutTimesNotUTC {
		z := time.FixedZone("UTC+8", 8*3600)
		sess.OpenedAt, sess.Deadline, sess.SettleUntil = sess.OpenedAt.In(z), sess.Deadline.In(z), sess.SettleUntil.In(z)
	}
	return sess
}

func (s *mutStore) Session(ctx context.Context, no string) (loot.Session, error) {
	sess, err := s.Store.Session(s.c(ctx), no)
	if err == nil && s.m == mutDeletesCanceled && sess.Status == loot.StatusCanceled {
		return loot.Session{}, loot.ErrNotFound
	}
	return s.view(sess), err
}

func (s *mutStore) StartClaiming(ctx context.Context, no string) (loot.Session, error) {
	sess, err := s.Store.StartClaiming(s.c(ctx), no)
	if err != nil && s.m == mutStartReopens && (sess.Status == loot.StatusSettling || sess.Status == loot.StatusClosed) {
		s.d.setStatus(no, loot.StatusClaiming)
		err = nil
	}
	return s.view(sess), err
}

func (s *mutStore) Cancel(ctx context.Context, no string) (loot.Session, error) {
	if s.m == mutCancelCheckThenWrite {
		cur, err := s.Store.Session(ctx, no)
		if err != nil {
			return cur, err
		}
		if _, err := loot.CheckCancel(cur); err != nil {
			return cur, err
		}
		s.awaitOtherWrite(ctx, no, cur.Status)
		s.d.setStatus(no, loot.StatusCanceled) // UPDATE ... SET status='CANCELED' WHERE session_no=?
		return s.view(cur), nil
	}
	before := s.statusOf(no)
	sess, err := s.Store.Cancel(s.c(ctx), no)
	switch {
	case s.m == mutCancelVoidsClosed && errors.Is(err, loot.ErrAlreadySettled):
		s.d.setStatus(no, loot.StatusCanceled)
		err = nil
	case s.m == mutCancelRepeatRefused && err == nil && before == loot.StatusCanceled:
		err = loot.ErrCanceled
	}
	return s.view(sess), err
}

func (s *mutStore) Claim(ctx context.Context, no string, p loot.PlayerID, in loot.Intent) (loot.Claim, bool, error) {
	if s.m == mutClaimCheckThenWrite {
		cur, err := s.Store.Session(ctx, no)
		if err != nil {
			return loot.Claim{}, false, err
		}
		if err := loot.CheckClaim(cur, p, s.now()); err != nil {
			return loot.Claim{}, false, err
		}
		pause()
	}
	var prev loot.Claim
	if s.m == mutClaimRetryMovesTime || s.m == mutClaimChangeKeepsTime {
		cs, _ := s.Store.Claims(ctx, no)
		for _, c := range cs {
			if c.Player == p {
				prev = c
			}
		}
	}
	c, created, err := s.Store.Claim(s.c(ctx), no, p, in)
	refusedLate := s.m == mutClaimCheckThenWrite && err != nil
	refusedOutsider := s.m == mutClaimNoMembership && errors.Is(err, loot.ErrNotMember)
	cur, _ := s.Store.Session(ctx, no)
	refusedAtDeadline := s.m == mutClaimDeadlineInclusive && errors.Is(err, loot.ErrClaimsClosed) &&
		cur.Status == loot.StatusClaiming && cur.Deadline.Equal(s.now())
	refusedStatus := s.m == mutClaimNoStatus && (errors.Is(err, loot.ErrClaimsClosed) || errors.Is(err, loot.ErrCanceled)) &&
		s.statusOf(no) != loot.StatusClaiming
	switch {
	case refusedLate || refusedOutsider || refusedStatus || refusedAtDeadline:
		c, created, err = loot.Claim{Session: no, Player: p, Intent: in, At: s.now()}, true, nil
		s.d.putClaim(c)
	case err == nil && s.m == mutClaimRetryMovesTime && prev.Intent == in:
		c.At = s.now()
		s.d.putClaim(c)
	case err == nil && s.m == mutClaimChangeKeepsTime && prev.Player == p && prev.Intent != in:
		c.At = prev.At
		s.d.putClaim(c)
	case err == nil && s.m == mutClaimInserts:
		created = true
		s.d.mu.Lock()
		s.d.rows[no] = append(s.d.rows[no], c)
		s.d.mu.Unlock()
	}
	if s.m == mutClaimSeconds {
		c.At = c.At.Truncate(time.Second)
	}
	if s.m == mutTimesNotUTC {
		c.At = c.At.In(time.FixedZone("UTC+8", 8*3600))
	}
	return c, created, err
}

func (s *mutStore) statusOf(no string) loot.Status {
	sess, _ := s.Store.Session(context.Background(), no)
	return sess.Status
}

func (s *mutStore) Claims(ctx context.Context, no string) ([]loot.Claim, error) {
	cs, err := s.Store.Claims(s.c(ctx), no)
	if err != nil {
		return cs, err
	}
	s.d.mu.Lock()
	byPlayer := map[loot.PlayerID]loot.Claim{}
	for _, c := range cs {
		byPlayer[c.Player] = c
	}
	maps.Copy(byPlayer, s.d.claims[no])
	rows := slices.Clone(s.d.rows[no])
	s.d.mu.Unlock()
	if s.m == mutClaimInserts {
		return rows, nil
	}
	if s.m == mutDeletesCanceled && s.statusOf(no) == loot.StatusCanceled {
		return nil, loot.ErrNotFound
	}
	out := slices.SortedFunc(maps.Values(byPlayer), func(a, b loot.Claim) int { return cmp.Compare(a.Player, b.Player) })
	out = slices.DeleteFunc(out, func(c loot.Claim) bool { return s.m == mutDeletesPass && c.Intent == loot.Pass })
	for i := range out {
		switch s.m {
		case mutClaimSeconds:
			out[i].At = out[i].At.Truncate(time.Second)
		case mutTimesNotUTC:
			out[i].At = out[i].At.In(time.FixedZone("UTC+8", 8*3600))
		}
	}
	return out, nil
}

func (s *mutStore) BeginSettle(ctx context.Context, no string, lease time.Duration) (loot.Frozen, error) {
	cur, _ := s.Store.Session(ctx, no)
	switch {
	case s.m == mutNoTakeover && cur.Status == loot.StatusSettling:
		return loot.Frozen{}, loot.ErrAlreadySettling
	case s.m == mutSettleDeadlineExclusive && cur.Status == loot.StatusClaiming && cur.Deadline.Equal(s.now()):
		return loot.Frozen{}, loot.ErrNotDue
	}
	fz, err := s.Store.BeginSettle(s.c(ctx), no, lease)
	if s.m == mutCASNotExclusive && errors.Is(err, loot.ErrAlreadySettling) {
		sess, _ := s.Store.Session(ctx, no)
		cs, _ := s.Store.Claims(ctx, no)
		return loot.Frozen{Session: sess, Claims: cs}, nil
	}
	if s.m == mutFrozenOmitsPass {
		fz.Claims = slices.DeleteFunc(fz.Claims, func(c loot.Claim) bool { return c.Intent == loot.Pass })
	}
	fz.Session = s.view(fz.Session)
	return fz, err
}

func (s *mutStore) RecordGrants(ctx context.Context, d loot.Decision) (loot.Session, error) {
	cur, _ := s.Store.Session(ctx, d.Session)
	switch {
	case s.m == mutFenceIgnored && cur.Status == loot.StatusSettling:
		d.Fence = cur.Fence
	case s.m == mutRecordRetryInserts && cur.Status == loot.StatusClosed && cur.Fence == d.Fence:
		s.d.addGrants(d.Session, d.Grants...)
	}
	sess, err := s.Store.RecordGrants(s.c(ctx), d)
	switch {
	case s.m == mutRecordPartial && errors.Is(err, loot.ErrBadArgument) && len(d.Grants) > 0:
		s.d.addGrants(d.Session, d.Grants[0]) // the first insert landed before the bad one failed
	case s.m == mutRecordIgnoresCancel && errors.Is(err, loot.ErrCanceled):
		s.d.addGrants(d.Session, d.Grants...) // UPDATE ... WHERE fence = ? (no status), then INSERT
		err = nil
	case s.m == mutRecordAnswersNoLease && err == nil:
		sess.SettleUntil = time.Time{} // what Open read, before any settler's lease
	}
	return s.view(sess), err
}

func (s *mutStore) MarkDelivered(ctx context.Context, grantNo string) (loot.Grant, error) {
	g, err := s.Store.MarkDelivered(s.c(ctx), grantNo)
	if s.m == mutMarkUnknownNil && errors.Is(err, loot.ErrNotFound) {
		return loot.Grant{No: grantNo, Status: loot.GrantSuccess}, nil
	}
	return g, err
}

func (s *mutStore) Grants(ctx context.Context, no string) ([]loot.Grant, error) {
	gs, err := s.Store.Grants(s.c(ctx), no)
	if err != nil {
		return gs, err
	}
	if s.m == mutDeletesCanceled && s.statusOf(no) == loot.StatusCanceled {
		return nil, loot.ErrNotFound
	}
	s.d.mu.Lock()
	gs = append(gs, s.d.grants[no]...)
	s.d.mu.Unlock()
	gs = slices.DeleteFunc(gs, func(g loot.Grant) bool { return s.m == mutDeletesDelivered && g.Status == loot.GrantSuccess })
	if s.m == mutTimesNotUTC {
		for i := range gs {
			gs[i].LeaseUntil = gs[i].LeaseUntil.In(time.FixedZone("UTC+8", 8*3600))
		}
	}
	return gs, nil
}

func (s *mutStore) LeaseGrants(ctx context.Context, limit int, b loot.Backoff) ([]loot.Grant, error) {
	switch s.m {
	case mutLeaseNoBackoff:
		b.Max = b.Base
	case mutLeaseNoLimit:
		limit *= 2
	}
	gs, err := s.Store.LeaseGrants(s.c(ctx), limit, b)
	if err != nil || (s.m != mutLeaseSuccess && s.m != mutLeaseShared) {
		return gs, err
	}
	for _, no := range s.d.sessionNos() {
		all, _ := s.Store.Grants(ctx, no)
		for _, g := range all {
			extra := (s.m == mutLeaseSuccess && g.Status == loot.GrantSuccess) ||
				(s.m == mutLeaseShared && g.Status == loot.GrantPending && !slices.ContainsFunc(gs, func(x loot.Grant) bool { return x.No == g.No }))
			if extra {
				gs = append(gs, g)
			}
		}
	}
	return gs, nil
}

func (s *mutStore) Overdue(ctx context.Context, limit int) ([]string, error) {
	nos, err := s.Store.Overdue(s.c(ctx), limit)
	if s.m == mutOverdueMissesSettling {
		nos = slices.DeleteFunc(nos, func(no string) bool { return s.statusOf(no) == loot.StatusSettling })
	}
	return nos, err
}

func (s *mutStore) Snapshot(ctx context.Context, no string) (loot.Snapshot, error) {
	snap, err := s.Store.Snapshot(s.c(ctx), no)
	if s.m == mutSnapshotLossy {
		snap.Claims = slices.Clone(snap.Claims)
		for i := range snap.Claims {
			snap.Claims[i].Fairness = loot.Fairness{}
		}
	}
	return snap, err
}

// mutInventory is the memory store's inventory; inventory-not-idempotent
// applies every delivery, keyed by nothing; inventory-batch-not-idempotent
// applies every grant of a batch again that was applied before.
type mutInventory struct {
	*memory.Inventory
	st *memory.Store
	m  mutation
	d  *mutData
}

func (inv *mutInventory) DeliverBatch(ctx context.Context, gs []loot.Grant) error {
	switch inv.m {
	case mutInventoryTwice:
		for _, g := range gs {
			if err := inv.Deliver(ctx, g); err != nil {
				return err
			}
		}
		return nil
	case mutInventoryBatchTwice:
		inv.d.mu.Lock()
		for _, g := range gs {
			if inv.st.Applied(g.No) > 0 {
				inv.d.applied[g.No]++
			}
		}
		inv.d.mu.Unlock()
	}
	return inv.Inventory.DeliverBatch(ctx, gs)
}

func (inv *mutInventory) Deliver(ctx context.Context, g loot.Grant) error {
	if inv.m == mutInventoryTwice {
		inv.d.mu.Lock()
		inv.d.applied[g.No]++
		inv.d.mu.Unlock()
	}
	return inv.Inventory.Deliver(ctx, g)
}
