package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/onceproof/onceproof/ref/loot"
)

// snapClaim is one frozen claim as loot_snapshot.claims keeps it: a JSON
// object per claim, with the fairness the settler read, times as RFC 3339
// in UTC at microseconds and omitted when zero. Field names are the
// column's format, read by auditors' SQL: never rename one.
type snapClaim struct {
	Player    int64  `json:"player"`
	Intent    string `json:"intent"`
	At        string `json:"at,omitempty"`
	Wins      int64  `json:"wins"`
	SeedMilli int64  `json:"seed_milli"`
	LastWin   string `json:"last_win,omitempty"`
	Since     string `json:"since,omitempty"`
}

const snapTime = "2006-01-02T15:04:05.000000Z07:00"

func fmtTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return loot.StoreTime(t).Format(snapTime)
}

func parseTime(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(snapTime, s)
	return loot.StoreTime(t), err
}

func encodeClaims(cs []loot.Candidate) ([]byte, error) {
	out := make([]snapClaim, len(cs))
	for i, c := range cs {
		out[i] = snapClaim{
			Player: int64(c.Player), Intent: string(c.Intent), At: fmtTime(c.At),
			Wins: c.Fairness.Wins, SeedMilli: c.Fairness.SeedMilli,
			LastWin: fmtTime(c.Fairness.LastWin), Since: fmtTime(c.Fairness.Since),
		}
	}
	return json.Marshal(out)
}

func decodeClaims(no string, b []byte) ([]loot.Candidate, error) {
	var in []snapClaim
	if err := json.Unmarshal(b, &in); err != nil {
		return nil, err
	}
	out := make([]loot.Candidate, len(in))
	for i, c := range in {
		at, err1 := parseTime(c.At)
		last, err2 := parseTime(c.LastWin)
		since, err3 := parseTime(c.Since)
		if err := errors.Join(err1, err2, err3); err != nil {
			return nil, err
		}
		out[i] = loot.Candidate{
			Claim:    loot.Claim{Session: no, Player: loot.PlayerID(c.Player), Intent: loot.Intent(c.Intent), At: at},
			Fairness: loot.Fairness{Wins: c.Wins, SeedMilli: c.SeedMilli, LastWin: last, Since: since},
		}
	}
	return out, nil
}

// Snapshot implements loot.Reader.
func (s *Store) Snapshot(ctx context.Context, no string) (loot.Snapshot, error) {
	op := "snapshot of " + no
	if err := live(ctx); err != nil {
		return loot.Snapshot{}, wrap(op, err)
	}
	var (
		snap             = loot.Snapshot{Session: no}
		status           string
		fence            *int64
		dungeon, lootC   *string
		quantity         *int
		deadline         *time.Time
		rule, hash       *string
		members, winners []int64
		claims           []byte
	)
	err := s.pool.QueryRow(ctx, s.q.snapshot, no).Scan(&status, &fence, &dungeon, &lootC, &quantity, &deadline, &rule,
		&members, &claims, &hash, &winners)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return loot.Snapshot{}, fmt.Errorf("loot/postgres: session %q: %w", no, loot.ErrNotFound)
	case err != nil:
		return loot.Snapshot{}, wrap(op, err)
	}
	switch loot.Status(status) {
	case loot.StatusClosed:
	case loot.StatusCanceled:
		return loot.Snapshot{}, fmt.Errorf("loot/postgres: snapshot of %q: %w", no, loot.ErrCanceled)
	default:
		return loot.Snapshot{}, fmt.Errorf("loot/postgres: snapshot of %q (%s): %w", no, status, loot.ErrNotDue)
	}
	if fence == nil {
		return loot.Snapshot{}, wrap(op, errors.New("CLOSED without a snapshot row"))
	}
	if snap.Claims, err = decodeClaims(no, claims); err != nil {
		return loot.Snapshot{}, wrap(op, fmt.Errorf("decoding the claims: %w", err))
	}
	snap.Fence, snap.Dungeon, snap.Loot, snap.Quantity = loot.Fence(*fence), *dungeon, *lootC, *quantity
	snap.Deadline, snap.Rule, snap.ClaimsHash = utc(*deadline), loot.RuleVersion(*rule), *hash
	snap.Members, snap.Winners = fromIDs(members), fromIDs(winners)
	return snap, nil
}

// Session implements loot.Reader.
func (s *Store) Session(ctx context.Context, no string) (loot.Session, error) {
	if err := live(ctx); err != nil {
		return loot.Session{}, wrap("session "+no, err)
	}
	sess, err := scanSession(s.pool.QueryRow(ctx, s.q.readSession, no))
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return loot.Session{}, fmt.Errorf("loot/postgres: session %q: %w", no, loot.ErrNotFound)
	case err != nil:
		return loot.Session{}, wrap("session "+no, err)
	}
	return sess, nil
}
