package snapjson

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"github.com/onceproof/onceproof/ref/loot"
)

// TestAppendIsJSONMarshal: on any snapshot, Append's bytes and error are
// json.Marshal's. Strings mix plain codes with the bytes json escapes and
// with non-ASCII (valid or not); times mix UTC, other offsets and years
// json refuses; slices are nil, empty or not.
//
//	go test ./ref/loot/internal/snapjson -run TestAppendIsJSONMarshal -rapid.checks 20000
func TestAppendIsJSONMarshal(t *testing.T) {
	fast := 0
	rapid.Check(t, func(t *rapid.T) {
		s := snapshot().Draw(t, "snapshot")
		if plain(s) {
			fast++
		}
		want, wantErr := json.Marshal(s)
		got, err := Append(nil, s)
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("Append error %v, json.Marshal error %v", err, wantErr)
		}
		if wantErr == nil {
			if diff := cmp.Diff(string(want), string(got)); diff != "" {
				t.Fatalf("Append differs from json.Marshal (-want +got):\n%s", diff)
			}
		}
	})
	if fast == 0 {
		t.Fatal("no snapshot drawn took the fast path: the property judged json.Marshal against itself")
	}
}

// TestAPlainSnapshotTakesTheFastPath: the property above would pass with a
// fast path that never runs, so a snapshot as a store's settle writes it
// (codes, UTC times, every slice) must be plain, and still json.Marshal's.
func TestAPlainSnapshotTakesTheFastPath(t *testing.T) {
	at := time.Date(2026, 12, 4, 1, 2, 3, 456789000, time.UTC)
	c := loot.Candidate{Claim: loot.Claim{Session: "S-1", Player: 7, Intent: loot.Need, At: at},
		Fairness: loot.Fairness{Wins: 2, SeedMilli: 1500, LastWin: at.Add(-time.Hour), Since: time.Time{}}}
	s := loot.Snapshot{Session: "S-1", Dungeon: "D", Loot: "L", Quantity: 2, Deadline: at, Rule: loot.RuleCount,
		Fence: 3, Members: []loot.PlayerID{7, 9}, Claims: []loot.Candidate{c, c}, ClaimsHash: "ab12", Winners: []loot.PlayerID{7}}
	if !plain(s) {
		t.Fatal("a store's snapshot is not plain: Append would always fall back to json.Marshal")
	}
	want, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Append([]byte("prefix:"), s)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff("prefix:"+string(want), string(got)); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
}

func BenchmarkAppend(b *testing.B) {
	at := time.Date(2026, 12, 4, 1, 2, 3, 456789000, time.UTC)
	s := loot.Snapshot{Session: "S-000123", Dungeon: "D", Loot: "L", Quantity: 2, Deadline: at, Rule: loot.RuleCount, Fence: 1, ClaimsHash: "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"}
	for p := loot.PlayerID(1); p <= 5; p++ {
		s.Members = append(s.Members, p)
		s.Claims = append(s.Claims, loot.Candidate{Claim: loot.Claim{Session: s.Session, Player: p, Intent: loot.Need, At: at},
			Fairness: loot.Fairness{Since: at.Add(-24 * time.Hour)}})
	}
	s.Winners = s.Members[:2]
	b.Run("impl=json.Marshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(s); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("impl=Append", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Append(nil, s); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func snapshot() *rapid.Generator[loot.Snapshot] {
	return rapid.Custom(func(t *rapid.T) loot.Snapshot {
		// Half the snapshots draw only what the fast path takes, else it
		// would run in a few in a thousand (each of a dozen strings and
		// times would have to come out plain).
		fast := rapid.Bool().Draw(t, "fast")
		str, stampGen := func() *rapid.Generator[string] { return anyStr(fast) }, func() *rapid.Generator[time.Time] { return anyStamp(fast) }
		s := loot.Snapshot{
			Session: str().Draw(t, "session"), Dungeon: str().Draw(t, "dungeon"), Loot: str().Draw(t, "loot"),
			Quantity: rapid.IntRange(-3, 1<<40).Draw(t, "quantity"), Deadline: stampGen().Draw(t, "deadline"),
			Rule: loot.RuleVersion(str().Draw(t, "rule")), Fence: loot.Fence(rapid.Int64().Draw(t, "fence")),
			Members:    ids().Draw(t, "members"),
			ClaimsHash: str().Draw(t, "hash"), Winners: ids().Draw(t, "winners"),
		}
		if n := rapid.IntRange(-1, 4).Draw(t, "claims"); n >= 0 {
			s.Claims = make([]loot.Candidate, n)
			for i := range s.Claims {
				s.Claims[i] = loot.Candidate{
					Claim: loot.Claim{Session: str().Draw(t, "claim session"), Player: loot.PlayerID(rapid.Int64().Draw(t, "player")),
						Intent: loot.Intent(str().Draw(t, "intent")), At: stampGen().Draw(t, "at")},
					Fairness: loot.Fairness{Wins: rapid.Int64().Draw(t, "wins"), SeedMilli: rapid.Int64().Draw(t, "seed"),
						LastWin: stampGen().Draw(t, "last win"), Since: stampGen().Draw(t, "since")},
				}
			}
		}
		return s
	})
}

// anyStr is codes or any printable ASCII (fast: a string is plain but for
// the few bytes json escapes, so that one such byte in an otherwise plain
// snapshot is drawn often), or those, the escapes, non-ASCII, invalid
// UTF-8.
func anyStr(fast bool) *rapid.Generator[string] {
	if fast {
		return rapid.OneOf(rapid.StringMatching(`[A-Za-z0-9_:.-]{0,12}`), rapid.StringMatching(`[ -~]{0,12}`))
	}
	return rapid.OneOf(
		rapid.StringMatching(`[A-Za-z0-9_:.-]{0,12}`),
		rapid.SampledFrom([]string{"", "a<b", "x&y", "q\"", `back\slash`, "tab\t", "\x00", "é", "\u2028", "\xff", "NEED"}),
		rapid.Map(rapid.SliceOfN(rapid.Byte(), 0, 8), func(b []byte) string { return string(b) }),
	)
}

// anyStamp is any time in years -250 to 11500 at any offset, or (fast)
// mostly one at offset zero in years 0-9999, with one chance in nine each
// of another offset or another year, so that one such time in an otherwise
// plain snapshot is drawn often.
func anyStamp(fast bool) *rapid.Generator[time.Time] {
	return rapid.Custom(func(t *rapid.T) time.Time {
		lo, hi := int64(-70000000000), int64(300000000000)
		if fast && rapid.IntRange(0, 8).Draw(t, "year out of 0-9999") > 0 {
			lo, hi = -62167219200, 253402300799 // 0000-01-01 to 9999-12-31, UTC
		}
		sec := rapid.Int64Range(lo, hi).Draw(t, "sec")
		v := time.Unix(sec, int64(rapid.IntRange(0, 999999999).Draw(t, "nsec")))
		zone := rapid.IntRange(0, 3).Draw(t, "zone")
		if fast && rapid.IntRange(0, 8).Draw(t, "offset not zero") > 0 {
			zone = rapid.SampledFrom([]int{0, 2, 3}).Draw(t, "zero zone")
		}
		switch zone {
		case 0:
			return v.UTC()
		case 1:
			return v.In(time.FixedZone("X", rapid.IntRange(-50*3600, 50*3600).Draw(t, "offset")))
		case 2:
			return time.Time{}
		}
		return v.In(time.FixedZone("UTC", 0))
	})
}

func ids() *rapid.Generator[[]loot.PlayerID] {
	return rapid.Custom(func(t *rapid.T) []loot.PlayerID {
		n := rapid.IntRange(-1, 4).Draw(t, "n")
		if n < 0 {
			return nil
		}
		ps := make([]loot.PlayerID, n)
		for i := range ps {
			ps[i] = loot.PlayerID(rapid.Int64().Draw(t, "id"))
		}
		return ps
	})
}
