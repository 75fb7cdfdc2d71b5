package loot

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	gocmp "github.com/google/go-cmp/cmp"
)

// Settlement is what Settle did.
type Settlement struct {
	// Session is the session as recorded: CLOSED.
	Session Session
	// Grants are the grants in rank order: as the store recorded them once
	// this call delivered them, as decided (PENDING) where it did not.
	Grants []Grant
	// Delivered counts the grants this call delivered and still held the
	// lease of when they became SUCCESS (see deliver): a settler that
	// stalled past its grants' lease while compensation delivered them
	// counts none of them.
	Delivered int
}

// Settle allocates a session's drop, once, and delivers it. It is the
// server's to call (a scheduler at the deadline, Recover), never a
// player's: a player who could trigger it could only be refused
// (ErrNotDue before the deadline), but there is no reason to let them try.
//
// Steps, each one call: take the Lock (if any, each of its calls bounded
// by Config.LockTimeout; held by another: ErrAlreadySettling); BeginSettle, the CAS that decides who settles;
// read the claimants' Fairness; rank (pure); RecordGrants with the fence,
// which closes the session with its PENDING grants and snapshot in one
// write; then per grant Inventory.Deliver and MarkDelivered.
//
// err == nil: the result is recorded and every grant delivered. Errors:
// the refusals of BeginSettle (ErrNotDue: call again after the deadline;
// ErrAlreadySettling, ErrAlreadySettled, ErrCanceled: nothing to do);
// ErrStaleFence (this settler was taken over; its result is discarded);
// ErrCanceled from RecordGrants (a Cancel won the race: nothing is
// granted); ErrOutcomeUnknown: if the returned Settlement's Session is
// CLOSED, the result is recorded and only some deliveries are unknown;
// otherwise nothing may be recorded yet. In both cases Recover finishes
// the work after the lease; do not call Settle in a loop.
func (s *Service) Settle(ctx context.Context, no string) (Settlement, error) {
	release, err := s.takeLock(ctx, no)
	if err != nil {
		return Settlement{}, err
	}
	defer release()
	fz, err := s.store.BeginSettle(ctx, no, s.lease)
	if err != nil {
		return Settlement{}, classify("settle "+no, err)
	}
	d, err := s.decide(ctx, fz)
	if err != nil {
		return Settlement{}, err
	}
	sess, err := s.store.RecordGrants(ctx, d)
	if err != nil {
		return Settlement{}, classify(fmt.Sprintf("settle %s: record (fence %d)", no, d.Fence), err)
	}
	out := Settlement{Session: sess, Grants: d.Grants}
	var errs []error
	for i, r := range s.deliverAll(ctx, out.Grants) {
		if r.err != nil {
			errs = append(errs, r.err)
			continue
		}
		out.Grants[i] = r.rec
		if r.mine {
			out.Delivered++
		}
	}
	return out, errors.Join(errs...)
}

// decide reads the claimants' fairness (one provider call) and computes
// the settler's Decision (Decide).
func (s *Service) decide(ctx context.Context, fz Frozen) (Decision, error) {
	var players []PlayerID
	for _, c := range fz.Claims {
		if c.Intent.Priority() > 0 {
			players = append(players, c.Player)
		}
	}
	fair := map[PlayerID]Fairness{}
	if len(players) > 0 {
		var err error
		if fair, err = s.fair.Fairness(ctx, fz.Session.Loot, players); err != nil {
			return Decision{}, fmt.Errorf("loot: settle %s: fairness: %w: %w", fz.Session.No, ErrOutcomeUnknown, err)
		}
	}
	return Decide(fz, fair, s.lease)
}

// Decide is the settler's pure step: from the frozen claims and the
// fairness read for the claimants that can win, the Decision to record
// (grants in rank order, each keyed by GrantNo, and the snapshot), under
// the session's rule version. It replays its own snapshot before
// returning it, so claims a store should never have handed back (a
// non-member's, a repeat) are refused before anything is recorded.
// Errors: ErrBadArgument for a rule this binary does not know (a node
// that knows it takes the session over after the lease) or a quantity
// below 1 (a corrupt row, which Open never writes: no node can settle it;
// an operator fixes or cancels it); ErrOutcomeUnknown
// when fair lacks a claimant (the provider broke its contract).
func Decide(fz Frozen, fair map[PlayerID]Fairness, lease time.Duration) (Decision, error) {
	sess := fz.Session
	rank, ok := RankerFor(sess.Rule)
	if !ok {
		return Decision{}, fmt.Errorf("loot: settle %s: %w", sess.No, badArg("unknown rule version %q", sess.Rule))
	}
	if sess.Quantity < 1 {
		return Decision{}, fmt.Errorf("loot: settle %s: %w", sess.No, badArg("the session records quantity %d, want >= 1: the row is corrupt; fix or cancel it", sess.Quantity))
	}
	cands := make([]Candidate, len(fz.Claims))
	for i, c := range fz.Claims {
		f, ok := fair[c.Player]
		if !ok && c.Intent.Priority() > 0 {
			return Decision{}, fmt.Errorf("loot: settle %s: %w: fairness provider has no entry for player %d", sess.No, ErrOutcomeUnknown, c.Player)
		}
		cands[i] = Candidate{Claim: c, Fairness: f}
	}
	slices.SortFunc(cands, func(a, b Candidate) int { return cmp.Compare(a.Player, b.Player) })
	winners := rank(sess.Quantity, sess.Deadline, cands)
	grants := make([]Grant, len(winners))
	for i, p := range winners {
		grants[i] = Grant{
			No: GrantNo(sess.No, p, sess.Loot), Session: sess.No, Player: p, Loot: sess.Loot,
			Quantity: 1, Rank: i + 1, Status: GrantPending,
		}
	}
	snap := Snapshot{
		Session: sess.No, Dungeon: sess.Dungeon, Loot: sess.Loot, Quantity: sess.Quantity,
		Deadline: sess.Deadline, Rule: sess.Rule, Fence: sess.Fence, Members: slices.Clone(sess.Members),
		Claims: cands, ClaimsHash: ClaimsHash(cands), Winners: winners,
	}
	if err := Replay(snap); err != nil {
		return Decision{}, fmt.Errorf("loot: settle %s: the store's frozen claims do not replay: %w", sess.No, err)
	}
	return Decision{Session: sess.No, Fence: sess.Fence, Grants: grants, Snapshot: snap, Lease: lease}, nil
}

// checkGrants reports whether the recorded grants are snap's winners, in
// order, each keyed by its GrantNo.
func checkGrants(snap Snapshot, gs []Grant) error {
	type row struct {
		No     string
		Player PlayerID
		Rank   int
	}
	want := make([]row, len(snap.Winners))
	for i, p := range snap.Winners {
		want[i] = row{GrantNo(snap.Session, p, snap.Loot), p, i + 1}
	}
	got := make([]row, len(gs))
	for i, g := range gs {
		got[i] = row{g.No, g.Player, g.Rank}
	}
	if d := gocmp.Diff(want, got); d != "" {
		return &ReplayError{Session: snap.Session, What: "grants on record are not the snapshot's winners", Diff: d}
	}
	return nil
}
