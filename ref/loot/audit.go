package loot

import (
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"slices"
	"time"

	gocmp "github.com/google/go-cmp/cmp"
)

// Snapshot is the audit record written with the grants when a session
// closes: everything needed to explain and recompute the result without
// asking anyone again (the source document's 4.6 settlement snapshot:
// participants, valid claims, winners, rule version).
type Snapshot struct {
	Session  string
	Dungeon  string
	Loot     string
	Quantity int
	Deadline time.Time
	Rule     RuleVersion
	// Fence is the settler's fence: which settle attempt the result is.
	Fence Fence
	// Members are the participants: the team snapshot taken at Open.
	Members []PlayerID
	// Claims are the frozen claims (PASS included: the player answered),
	// sorted by player, each with the fairness the settler read.
	Claims []Candidate
	// ClaimsHash is ClaimsHash(Claims): a change to any recorded claim
	// shows.
	ClaimsHash string
	// Winners are the players granted one item each, in rank order.
	Winners []PlayerID
}

// Effective returns how many claims can win (not PASS): the document's
// "valid claims" count.
func (s Snapshot) Effective() int {
	n := 0
	for _, c := range s.Claims {
		if c.Intent.Priority() > 0 {
			n++
		}
	}
	return n
}

// claimsHashTag versions ClaimsHash's encoding; a change of encoding is a
// new tag, never an edit (recorded hashes must keep verifying).
const claimsHashTag = "onceproof/loot claims v1\x00"

// ClaimsHash is the hex SHA-256 of a canonical encoding of claims (sorted
// by player first, so it does not depend on their order): per claim the
// player, the intent (length-prefixed), the claim time and the fairness
// fields, times as microseconds since 1970 (0 for a zero time), integers
// as 8 bytes big-endian. Pinned by a golden vector.
func ClaimsHash(claims []Candidate) string {
	cs := slices.Clone(claims)
	slices.SortFunc(cs, func(a, b Candidate) int { return cmp.Compare(a.Player, b.Player) })
	h := sha256.New()
	h.Write([]byte(claimsHashTag))
	var b [8]byte
	put := func(v int64) {
		binary.BigEndian.PutUint64(b[:], uint64(v))
		h.Write(b[:])
	}
	for _, c := range cs {
		put(int64(c.Player))
		put(int64(len(c.Intent)))
		h.Write([]byte(c.Intent))
		put(micros(c.At))
		put(c.Fairness.Wins)
		put(c.Fairness.SeedMilli)
		put(micros(c.Fairness.LastWin))
		put(micros(c.Fairness.Since))
	}
	return hex.EncodeToString(h.Sum(nil))
}

func micros(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMicro()
}

// ReplayError is Replay's finding: the recorded snapshot does not explain
// its own winners. Diff is a go-cmp diff (-recorded +recomputed).
type ReplayError struct {
	Session string
	What    string
	Diff    string
}

func (e *ReplayError) Error() string {
	return fmt.Sprintf("loot: replay of session %q: %s (-recorded +recomputed):\n%s", e.Session, e.What, e.Diff)
}

// Replay recomputes s's result from s alone and reports any mismatch as a
// *ReplayError: a quantity below 1 (no valid session has one), the claims
// hash, claims from non-members or repeated, and the winners under
// s.Rule's Ranker. nil means the snapshot explains its result.
func Replay(s Snapshot) error {
	if s.Quantity < 1 {
		return &ReplayError{Session: s.Session, What: "quantity below 1 (a corrupt record)", Diff: gocmp.Diff(1, s.Quantity)}
	}
	if h := ClaimsHash(s.Claims); h != s.ClaimsHash {
		return &ReplayError{Session: s.Session, What: "claims hash", Diff: gocmp.Diff(s.ClaimsHash, h)}
	}
	seen := make(map[PlayerID]bool, len(s.Claims))
	var bad []PlayerID
	for _, c := range s.Claims {
		if seen[c.Player] || !s.IsMember(c.Player) {
			bad = append(bad, c.Player)
		}
		seen[c.Player] = true
	}
	if len(bad) > 0 {
		return &ReplayError{Session: s.Session, What: "claims from non-members or repeated", Diff: gocmp.Diff([]PlayerID(nil), bad)}
	}
	r, ok := RankerFor(s.Rule)
	if !ok {
		return &ReplayError{Session: s.Session, What: "unknown rule version", Diff: gocmp.Diff(s.Rule, Rules())}
	}
	if got := r(s.Quantity, s.Deadline, s.Claims); !slices.Equal(got, s.Winners) {
		return &ReplayError{Session: s.Session, What: "winners", Diff: gocmp.Diff(s.Winners, got)}
	}
	return nil
}

// IsMember reports whether p is among the snapshot's members.
func (s Snapshot) IsMember(p PlayerID) bool { return slices.Contains(s.Members, p) }
