package mysql_test

import (
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/onceproof/onceproof/internal/testkit/testserver"
	"github.com/onceproof/onceproof/ref/loot"
)

// TestSessionsWithoutAMemberListReadAsWithOne: every read of a session
// takes its members from loot_member_list, the row Open writes, and a
// session without one (opened by a version before the table) from
// loot_member. Both kinds, through every statement that answers with a
// session (the Reader, List, BeginSettle's and RecordGrants' CALLs, alone
// and batched), answer the same members, and each answer is what a read
// of the session says right after it.
func TestSessionsWithoutAMemberListReadAsWithOne(t *testing.T) {
	reproduce := "; reproduce: go test ./ref/loot/mysql -run " + t.Name()
	dsn := testserver.MariaDB(t)
	clock := newTestClock(t, dsn)
	s := open(t, dsn)
	ctx := t.Context()
	team := []loot.PlayerID{1, 2, 3}
	// listed keep their list rows; bare lose them, as if opened before
	// loot_member_list. Each kind has one session settled alone and one
	// in a batch.
	listed, bare := []string{"listed-1", "listed-2"}, []string{"bare-1", "bare-2"}
	for _, no := range append(slices.Clone(listed), bare...) {
		claimed(t, s, clock, no, 2, len(team))
		clock.advance(t, -time.Minute) // claimed moved it past this session's deadline
	}
	clock.advance(t, time.Minute)
	if _, err := s.DB().ExecContext(ctx, "DELETE FROM loot_member_list WHERE session_no IN (?, ?)", bare[0], bare[1]); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := s.DB().QueryRowContext(ctx, "SELECT COUNT(*) FROM loot_member_list").Scan(&n); err != nil || n != len(listed) {
		t.Fatalf("member list rows: %d, %v; want %d%s", n, err, len(listed), reproduce)
	}
	// same fails unless got is the session as a read says now, with team
	// as its members.
	same := func(what string, got loot.Session) {
		t.Helper()
		if !slices.Equal(got.Members, team) {
			t.Errorf("%s: members %v, want %v%s", what, got.Members, team, reproduce)
		}
		read, err := s.Session(ctx, got.No)
		if err != nil {
			t.Fatalf("%s: read back: %v%s", what, err, reproduce)
		}
		if diff := cmp.Diff(read, got); diff != "" {
			t.Errorf("%s: answer differs from the read after it (-read +answer):\n%s%s", what, diff, reproduce)
		}
	}
	listedAll, err := s.List(ctx, loot.ListQuery{Limit: 10})
	if err != nil || len(listedAll) != 4 {
		t.Fatalf("List: %d sessions, %v; want 4%s", len(listedAll), err, reproduce)
	}
	for _, sess := range listedAll {
		same("List's "+sess.No, sess)
	}

	decide := func(fz loot.Frozen) loot.Decision {
		t.Helper()
		d, err := decideNew(fz)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	// Alone: the first of each kind.
	for _, no := range []string{listed[0], bare[0]} {
		fz, err := s.BeginSettle(ctx, no, time.Minute)
		if err != nil {
			t.Fatalf("BeginSettle(%s): %v%s", no, err, reproduce)
		}
		same("BeginSettle("+no+")", fz.Session)
		sess, err := s.RecordGrants(ctx, decide(fz))
		if err != nil {
			t.Fatalf("RecordGrants(%s): %v%s", no, err, reproduce)
		}
		same("RecordGrants("+no+")", sess)
	}
	// Batched: the second of each kind in one batch.
	batch := []string{listed[1], bare[1]}
	fzs, errs := s.BeginSettleBatch(ctx, batch, time.Minute)
	ds := make([]loot.Decision, len(batch))
	for i, no := range batch {
		if errs[i] != nil {
			t.Fatalf("batched BeginSettle(%s): %v%s", no, errs[i], reproduce)
		}
		same("batched BeginSettle("+no+")", fzs[i].Session)
		ds[i] = decide(fzs[i])
	}
	sessions, errs := s.RecordGrantsBatch(ctx, ds)
	for i, no := range batch {
		if errs[i] != nil {
			t.Fatalf("batched RecordGrants(%s): %v%s", no, errs[i], reproduce)
		}
		if sessions[i].Status != loot.StatusClosed {
			t.Errorf("batched RecordGrants(%s): %s, want CLOSED%s", no, sessions[i].Status, reproduce)
		}
		same("batched RecordGrants("+no+")", sessions[i])
	}
}
