package seedservice

import (
	"os"
	"testing"
	"time"
)

// libfaketime is Debian's faketime library: preloaded into a JVM, it
// shifts the wall clock the JVM reads (LocalDateTime.now()) by FAKETIME.
// A relative offset shifts the monotonic clock by the same constant,
// which leaves every interval the JVM times as it was. Do not add
// FAKETIME_DONT_FAKE_MONOTONIC=1: with it, measured on this machine, a
// 200 ms Thread.sleep took 3.8 to 5.6 s (three runs at load 24..31),
// against 0.65 to 1.08 s for the whole JVM run without it.
const libfaketime = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1"

// skewed starts an instance of e whose clock is offset from the
// machine's (a libfaketime offset such as "+2h").
func (e *env) skewed(offset string) *instance {
	e.t.Helper()
	if _, err := os.Stat(libfaketime); err != nil {
		missing(e.t, libfaketime+" missing (apt-get install faketime)")
	}
	return e.startEnv([]string{"LD_PRELOAD=" + libfaketime, "FAKETIME=" + offset})
}

// TestSkewedInstancesJudgeTheDeadlineAndStampClaimsByTheirOwnClocks: of
// three instances on one database, one two hours ahead and one two
// hours behind, the one ahead refuses a member's claim as late while the
// database's clock is an hour before the deadline (HonestAnswer), the one
// behind accepts a claim after the deadline and lockForSettle freezes it
// in (InWindow), and its claims' created_at, two hours early, rank a NEED
// sent after another's first (RuleOrder): loot-seed-verbatim under
// clock-skew.
func TestSkewedInstancesJudgeTheDeadlineAndStampClaimsByTheirOwnClocks(t *testing.T) {
	s := startService(t)
	ahead, behind := s.env.skewed("+2h"), s.env.skewed("-2h")
	const no, loot = "S202407", "CLOAK"
	st, body := s.post("/api/loot/sessions", map[string]any{"sessionNo": no, "lootCode": loot, "quantity": 1, "claimWindowSeconds": hour})
	answer(t, "open", st, body, 200, map[string]any{"code": 0})

	st, body = ahead.post("/api/loot/intent", map[string]any{"sessionNo": no, "playerId": 41, "intentType": "NEED"})
	answer(t, "claim on the instance ahead", st, body, 200, map[string]any{"code": 1001, "accepted": false})
	var open bool
	if err := s.db.QueryRow("SELECT NOW() < deadline_at FROM loot_session WHERE session_no = ?", no).Scan(&open); err != nil || !open {
		t.Fatalf("the database's clock is not before the deadline (%v, %v): the refusal above proves nothing; reproduce: %s", open, err, reproduce(t.Name()))
	}
	st, body = s.post("/api/loot/intent", map[string]any{"sessionNo": no, "playerId": 42, "intentType": "NEED"})
	answer(t, "claim on the instance in time", st, body, 200, map[string]any{"accepted": true})
	st, body = behind.post("/api/loot/intent", map[string]any{"sessionNo": no, "playerId": 43, "intentType": "NEED"})
	answer(t, "later claim on the instance behind", st, body, 200, map[string]any{"accepted": true})

	s.endClaimWindow(no)
	st, body = behind.post("/api/loot/intent", map[string]any{"sessionNo": no, "playerId": 44, "intentType": "NEED", "fairScore": 1})
	answer(t, "claim after the deadline on the instance behind", st, body, 200, map[string]any{"code": 0, "accepted": true})
	st, body = s.post("/api/loot/settle", map[string]any{"sessionNo": no, "lootCode": loot})
	answer(t, "settle", st, body, 200, map[string]any{"message": "settle triggered"})

	in := s.intents(no)
	if len(in) != 3 || in[0].player != 42 || in[1].player != 43 || in[2].player != 44 {
		t.Fatalf("intent rows %+v, want 42, 43 and 44 (41 refused); reproduce: %s", in, reproduce(t.Name()))
	}
	r := s.session(no)
	if skew := in[0].createdAt.Sub(in[1].createdAt); skew < time.Hour || !in[2].createdAt.Before(r.deadline) {
		t.Fatalf("created_at %v (42) and %v (43): the instance behind stamps its claim %v earlier, want about 2h; 44's %v, want before the deadline %v; reproduce: %s",
			in[0].createdAt, in[1].createdAt, skew, in[2].createdAt, r.deadline, reproduce(t.Name()))
	}
	want := []grantRow{{no + ":43:" + loot, 43, loot, "PENDING"}}
	if g := s.grants(no); r.status != "CLOSED" || len(g) != 1 || g[0] != want[0] {
		t.Fatalf("session %+v, grants %v; want CLOSED and %v (43's NEED, sent after 42's, stamped earlier); reproduce: %s", r, g, want, reproduce(t.Name()))
	}
}
