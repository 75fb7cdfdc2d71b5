package loot

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// PlayerID identifies a player (the source document's BIGINT player_id).
// Valid ids are > 0.
type PlayerID int64

// Caller is the authenticated identity of whoever sends a request. The
// API takes it apart from the request body, which a client controls: the
// server's authentication layer (session token, mTLS identity) fills it,
// never a field a player typed (the source document reads playerId from
// the request body, so any client can claim, or PASS, for another player).
type Caller struct {
	Player PlayerID
	_      struct{}
}

// Fence is the session's settle version: every won BeginSettle bumps it,
// and every write a settler makes after its CAS carries the value it got,
// so a settler that paused past its lease cannot write over its
// successor's (stores keep it in a BIGINT column).
type Fence int64

// MaxCodeLen bounds session numbers, dungeon codes and loot codes (the
// source document's VARCHAR(64) columns). A grant number is then at most
// 64 + 1 + 20 (an int64 in decimal) + 1 + 64 = 150 bytes: size the
// grant_no column for it (the document's VARCHAR(96) is too short).
const MaxCodeLen = 64

// MaxQuantity bounds Spec.Quantity: 2^31-1, the largest value of the
// stores' quantity and allocated columns (PostgreSQL integer, MariaDB INT:
// both 32-bit signed). Every count of grants fits under it too: a session
// grants at most min(Quantity, team size) items.
const MaxQuantity = math.MaxInt32

// The range of every time a Spec carries (UTC, after StoreTime): MariaDB's
// DATETIME(6), 1000-01-01 to 9999-12-31 23:59:59.999999, the narrowest of
// the stores' (PostgreSQL's timestamptz spans 4713 BC to 294276 AD, the
// memory store any time.Time). Year 9999 is also where Go's JSON encoding
// of a time, which the audit snapshot uses, ends.
var (
	minStoreTime = time.Date(1000, 1, 1, 0, 0, 0, 0, time.UTC)
	maxStoreTime = time.Date(9999, 12, 31, 23, 59, 59, 999999000, time.UTC)
)

// Spec is what Open records: one team drop to allocate.
type Spec struct {
	// No is the session number, the business key (unique): a code (see
	// CheckSessionNo) without ':' (it is a field of the grant number).
	No string
	// Dungeon is the dungeon code: 1..MaxCodeLen bytes of valid UTF-8
	// without control characters.
	Dungeon string
	// Loot is the loot code: as Dungeon, and no ':'.
	Loot string
	// Quantity is how many items dropped: the top Quantity claims get one
	// each. 1..MaxQuantity; it may exceed the team (the rest is
	// unallocated).
	Quantity int
	// Deadline ends claiming, judged by the store's clock only: claims are
	// taken while now < Deadline, settling is due once now >= Deadline. It
	// must be after the store's now at Open, and in UTC between 1000-01-01
	// and 9999-12-31 23:59:59.999999 (MariaDB's DATETIME(6), the narrowest
	// store's range). Stored in UTC at microsecond precision.
	Deadline time.Time
	// Rule is the ranking rule version (see Rules); recorded so that the
	// result can be replayed under the same rule forever.
	Rule RuleVersion
	// Members is the team snapshot, the only players who may claim. At
	// least one, each > 0, no repeats; recorded sorted.
	Members []PlayerID
	_       struct{}
}

// Session is a session as the store records it.
type Session struct {
	Spec
	Status Status
	// Fence is 0 until the first BeginSettle, then the winning settler's.
	Fence Fence
	// OpenedAt is the store's clock at Open.
	OpenedAt time.Time
	// SettleUntil is when the current settler's lease ends (store clock):
	// until then BeginSettle refuses with ErrAlreadySettling, after it any
	// node may take over. Zero before SETTLING.
	SettleUntil time.Time
	// Allocated is how many grants were recorded (CLOSED).
	Allocated int
}

// IsMember reports whether p is in the member snapshot (of a normalized
// spec, as stores return it).
func (s Spec) IsMember(p PlayerID) bool {
	_, ok := slices.BinarySearch(s.Members, p)
	return ok
}

// Normalize returns spec as stores record it: the deadline in UTC at
// microsecond precision, the members sorted, copied. It validates
// everything it can without the store's clock (the deadline's lower bound
// is the store's to judge).
func (s Spec) Normalize() (Spec, error) {
	if err := checkCode("session number", s.No, true); err != nil {
		return Spec{}, err
	}
	if err := checkCode("dungeon code", s.Dungeon, false); err != nil {
		return Spec{}, err
	}
	if err := checkCode("loot code", s.Loot, true); err != nil {
		return Spec{}, err
	}
	if s.Quantity < 1 || s.Quantity > MaxQuantity {
		return Spec{}, badArg("quantity %d, want 1..%d", s.Quantity, MaxQuantity)
	}
	if s.Deadline.IsZero() {
		return Spec{}, badArg("no deadline")
	}
	s.Deadline = StoreTime(s.Deadline)
	if s.Deadline.Before(minStoreTime) || s.Deadline.After(maxStoreTime) {
		return Spec{}, badArg("deadline %s, want %s..%s (UTC)", s.Deadline.Format(time.RFC3339Nano),
			minStoreTime.Format(time.RFC3339Nano), maxStoreTime.Format(time.RFC3339Nano))
	}
	if _, ok := RankerFor(s.Rule); !ok {
		return Spec{}, badArg("unknown rule version %q (have %v)", s.Rule, Rules())
	}
	if len(s.Members) == 0 {
		return Spec{}, badArg("empty team")
	}
	ms := slices.Clone(s.Members)
	slices.Sort(ms)
	for i, m := range ms {
		if m <= 0 {
			return Spec{}, badArg("member id %d, want > 0", m)
		}
		if i > 0 && ms[i-1] == m {
			return Spec{}, badArg("member %d listed twice", m)
		}
	}
	s.Members = ms
	return s, nil
}

// Same reports whether two normalized specs define the same session (the
// test an idempotent Open applies to a session that already exists).
func (s Spec) Same(o Spec) bool {
	return s.No == o.No && s.Dungeon == o.Dungeon && s.Loot == o.Loot && s.Quantity == o.Quantity &&
		s.Deadline.Equal(o.Deadline) && s.Rule == o.Rule && slices.Equal(s.Members, o.Members)
}

// CheckSessionNo returns nil if no can be a session number (Spec.No),
// else ErrBadArgument saying why. The Service checks every number it is
// given before its store sees one, so a number no store could hold is
// refused alike by all of them, before any lookup.
func CheckSessionNo(no string) error { return checkCode("session number", no, true) }

// checkCode checks a code against what every store can keep and compare:
// 1..MaxCodeLen bytes (PostgreSQL's octet_length check, within MariaDB's
// VARCHAR(64) of characters); valid UTF-8 (PostgreSQL refuses anything
// else with SQLSTATE 22021, MariaDB's utf8mb4 columns with error 1366);
// no control character, Unicode's Cc: C0, DEL and C1 (PostgreSQL text
// cannot hold NUL, MariaDB can, so a NUL would be a different session on
// each; the others are never part of a code and only hide in logs).
func checkCode(what, v string, noColon bool) error {
	switch {
	case v == "":
		return badArg("empty %s", what)
	case len(v) > MaxCodeLen:
		return badArg("%s of %d bytes, want <= %d", what, len(v), MaxCodeLen)
	case !utf8.ValidString(v):
		return badArg("%s %q is not valid UTF-8", what, v)
	case strings.IndexFunc(v, unicode.IsControl) >= 0:
		return badArg("%s %q contains a control character", what, v)
	case noColon && strings.Contains(v, ":"):
		return badArg("%s %q contains ':', the grant number's separator", what, v)
	}
	return nil
}

// GrantNo is the idempotency key of one grant: session:player:loot, the
// source document's key. Session numbers and loot codes cannot contain
// ':' and a player id is a decimal integer, so the three fields can be
// read back from it unambiguously. A retry, a takeover settler and every
// compensation pass derive the same key; nothing ever makes a new one.
func GrantNo(session string, p PlayerID, loot string) string {
	return session + ":" + strconv.FormatInt(int64(p), 10) + ":" + loot
}

// StoreTime is t as every store keeps times: UTC, truncated to the
// microsecond (SQL's DATETIME(6) and TIMESTAMP(6); the source document's
// DATETIME without a fraction makes claims in the same second tie). The
// memory store applies it too, so its behaviour matches SQL's.
func StoreTime(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return t.UTC().Truncate(time.Microsecond)
}
