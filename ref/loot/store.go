package loot

import (
	"context"
	"time"
)

// Frozen is what a won BeginSettle hands its settler.
type Frozen struct {
	// Session is the session as the CAS left it: SETTLING, its new Fence,
	// SettleUntil.
	Session Session
	// Claims are every claim of the session, sorted by player. They are
	// frozen: no claim is written outside CLAIMING.
	Claims []Claim
}

// Decision is a settler's result, which RecordGrants writes all at once.
type Decision struct {
	Session string
	// Fence is the value the settler's BeginSettle returned.
	Fence Fence
	// Grants are the rows to insert, PENDING with Attempts 0 (the store
	// sets LeaseUntil). Their numbers are distinct.
	Grants []Grant
	// Snapshot is the audit record of the result.
	Snapshot Snapshot
	// Lease is the grants' first lease: until now + Lease the settler
	// delivers them itself and LeaseGrants leaves them alone.
	Lease time.Duration
}

// Reader reads what a Store recorded. Reads are plain SELECTs; they see a
// committed state and take no locks.
type Reader interface {
	// Session returns the session, or ErrNotFound.
	Session(ctx context.Context, no string) (Session, error)
	// Claims returns the session's claims sorted by player (empty for a
	// session without claims), or ErrNotFound for no session.
	Claims(ctx context.Context, no string) ([]Claim, error)
	// Grants returns the session's grants in rank order (empty before
	// CLOSED and forever for a canceled session), or ErrNotFound.
	Grants(ctx context.Context, no string) ([]Grant, error)
	// Snapshot returns the audit snapshot recorded when the session closed;
	// ErrNotDue while it is not CLOSED yet, ErrCanceled for a canceled one,
	// ErrNotFound for no session.
	Snapshot(ctx context.Context, no string) (Snapshot, error)
}

// Store is the durable state of loot allocation: sessions with their
// member snapshot, claims unique by (session, player), grants unique by
// grant number, audit snapshots. It is the one authority: locks and node
// memory are optimisations, and a fresh node carries on from the store
// alone. Its shape is that of three SQL tables (session + members, claim,
// grant) and an audit table; real stores implement it with one atomic
// statement or one short transaction per method, as each method says.
//
// Contract, for every method:
//
//   - Atomic: each method is ONE statement or transaction; it either
//     happened entirely or not at all. Every status change is a conditional
//     write, UPDATE ... SET status = to WHERE session_no = ? AND status IN
//     (from) AND <guard> (from and to as Transition(op) gives them, the
//     guard as the Check functions state it), never a read followed by a
//     write. When it matches no row the store reads the row in the same
//     transaction and returns the guard's error (CheckStart, CheckClaim,
//     CheckSettle, CheckRecord, CheckCancel, CheckOpen), so all stores
//     refuse alike.
//   - One clock: "now" is the store's clock (the database's NOW(6) or
//     clock_timestamp()), read once per call; it alone judges deadlines and
//     leases. Node clocks are never passed in. Every time stored or
//     returned is StoreTime(t): UTC, microsecond precision.
//   - Errors: this package's Err sentinels are definite answers (nothing
//     was written, unless the method says otherwise). Any other error
//     means the outcome is unknown (the write may have landed); a
//     cancelled context returns ctx.Err() wrapped. The Service reports it
//     as ErrOutcomeUnknown; its caller repeats the call or leaves the rest
//     to Recover. Every method is safe to repeat.
//   - Nothing deletes: no method removes a row (canceled sessions, changed
//     claims and delivered grants stay, as audit data). The application's
//     database role needs SELECT, INSERT and UPDATE only, and EXECUTE on
//     the routines of a store whose Schema has some (MariaDB's).
//   - Slices passed in are not retained; slices returned belong to the
//     caller. Safe for concurrent use by many handles (nodes) on one
//     database.
type Store interface {
	Reader

	// Open inserts the session, OPEN with Fence 0 and OpenedAt = now, and
	// its member rows, in one transaction; created is true. If a session
	// with spec.No exists it returns it unchanged with created false,
	// whatever spec says (the Service compares). spec is normalized
	// (Spec.Normalize). A deadline at or before now: ErrBadArgument
	// (CheckOpen) and nothing written.
	// A PostgreSQL sketch:
	//   INSERT INTO loot_session ... SELECT ... WHERE :deadline > now()
	//   ON CONFLICT DO NOTHING; INSERT INTO loot_member ...; SELECT ...
	Open(ctx context.Context, spec Spec) (s Session, created bool, err error)

	// StartClaiming moves OPEN -> CLAIMING (CheckStart). Already CLAIMING:
	// returns it unchanged, nil. Otherwise the guard's error.
	//   UPDATE loot_session SET status='CLAIMING' WHERE session_no=? AND status='OPEN'
	StartClaiming(ctx context.Context, no string) (Session, error)

	// Claim writes player's intent, in one statement guarded by
	// CheckClaim: member of the snapshot, status CLAIMING, now < Deadline,
	// all judged in the same statement as the write (a claim checked first
	// and written after could land once settling began). The statement
	// reads the session row under a shared lock (FOR SHARE; MySQL's
	// INSERT ... SELECT takes one), so it serializes with BeginSettle's
	// UPDATE: a plain snapshot read under READ COMMITTED would let a claim
	// commit after the CAS froze the claims. One row per (session, player)
	// by a unique key: the first write inserts it with At = now (created
	// true); a repeat of the same intent changes nothing (created false,
	// the recorded claim); another intent replaces the intent and sets At =
	// now (created false). A MySQL sketch:
	//   INSERT INTO loot_claim (...) SELECT ... FROM loot_session s JOIN loot_member m
	//   ON ... WHERE s.status='CLAIMING' AND s.deadline_at > NOW(6) AND m.player_id=?
	//   ON DUPLICATE KEY UPDATE claimed_at = IF(intent = VALUES(intent), claimed_at, NOW(6)), intent = VALUES(intent)
	Claim(ctx context.Context, no string, player PlayerID, intent Intent) (c Claim, created bool, err error)

	// Cancel moves OPEN, CLAIMING or SETTLING -> CANCELED (CheckCancel).
	// Already CANCELED: unchanged, nil. CLOSED: ErrAlreadySettled (grants
	// exist only in CLOSED sessions, and a closed result stands). Cancel
	// and RecordGrants are conditional writes on the same row, so exactly
	// one of them wins a race: a canceled session never has a grant.
	Cancel(ctx context.Context, no string) (Session, error)

	// BeginSettle is the settle CAS, the authority on who settles:
	// CLAIMING with now >= Deadline, or SETTLING with now >= SettleUntil (a
	// takeover of a settler whose lease ended), becomes SETTLING with
	// Fence+1 and SettleUntil = now + lease, in one conditional UPDATE;
	// exactly one of any number of concurrent callers wins. It returns the
	// new session and the frozen claims (read in the same transaction).
	// Refusals (CheckSettle): ErrNotDue (OPEN, or before the deadline),
	// ErrAlreadySettling (a live lease), ErrAlreadySettled, ErrCanceled,
	// ErrNotFound. lease must be > 0.
	//   UPDATE loot_session SET status='SETTLING', fence=fence+1,
	//   settle_until=NOW(6)+lease WHERE session_no=? AND ((status='CLAIMING'
	//   AND deadline_at<=NOW(6)) OR (status='SETTLING' AND settle_until<=NOW(6)))
	BeginSettle(ctx context.Context, no string, lease time.Duration) (Frozen, error)

	// RecordGrants writes d in one transaction: SETTLING with Fence ==
	// d.Fence becomes CLOSED with Allocated = len(d.Grants), the grants are
	// inserted PENDING with LeaseUntil = now + d.Lease, and the snapshot
	// is inserted. All or nothing, and one round trip for the whole
	// decision, not one per grant: PostgreSQL sends one multi-row INSERT,
	// MariaDB one CALL of a stored routine that inserts the grants from
	// one JSON array, only when the fenced UPDATE matched. Already CLOSED
	// by d.Fence: unchanged, nil (a retry). The session returned with a nil
	// error is the row as it stands after the call, as Session would read
	// it: the Service hands it to its caller as the settlement's session
	// (loottest's record/answers-the-closed-row).
	// Refusals (CheckRecord): ErrStaleFence (another fence holds or closed
	// it), ErrCanceled, ErrNotFound; ErrBadArgument for a malformed
	// decision (CheckDecision: a grant of another session, a repeated grant
	// number).
	RecordGrants(ctx context.Context, d Decision) (Session, error)

	// MarkDelivered moves grant grantNo PENDING -> SUCCESS once the
	// Inventory confirmed it; already SUCCESS: unchanged, nil. Forward
	// only: no method moves SUCCESS back. ErrNotFound for no such grant.
	// Returns the grant as recorded. It carries no fence, and needs none:
	// grants exist only once a fenced RecordGrants closed their session,
	// which no later fence can reopen, and marking one delivered only
	// repeats what the Inventory (idempotent by grant number) made true, so
	// a stale settler, a takeover and compensation may all call it.
	MarkDelivered(ctx context.Context, grantNo string) (Grant, error)

	// LeaseGrants is the compensation lease: it takes up to limit PENDING
	// grants whose LeaseUntil <= now, oldest lease first, and in the same
	// statement sets Attempts+1 and LeaseUntil = now + b.Lease(Attempts+1),
	// returning them as updated. A grant is handed to one caller per lease
	// (SELECT ... FOR UPDATE SKIP LOCKED, or UPDATE ... RETURNING).
	LeaseGrants(ctx context.Context, limit int, b Backoff) ([]Grant, error)

	// Overdue lists up to limit sessions a settler must act on: CLAIMING
	// with Deadline <= now (nobody triggered the settle) and SETTLING with
	// SettleUntil <= now (the settler died or stalled). Recover settles
	// them. Indexes on (status, deadline_at) and (status, settle_until)
	// serve it.
	Overdue(ctx context.Context, limit int) ([]string, error)
}

// BatchMarker is a Store that marks many grants delivered in one call.
// The Service uses it, when the Store has it, after a BatchInventory
// delivered a whole batch: one round trip for the batch instead of one per
// grant.
type BatchMarker interface {
	// MarkDeliveredBatch is MarkDelivered for every grant in nos, in one
	// statement or transaction: each recorded grant of nos moves PENDING ->
	// SUCCESS (already SUCCESS: unchanged). It returns the grants as
	// recorded, in the order of nos (a number repeated in nos is returned
	// at each place). A number not recorded is ErrNotFound, and then the
	// recorded ones may have been marked: marking only repeats what the
	// Inventory made true, so a partial mark is harmless and a repeat
	// completes it.
	MarkDeliveredBatch(ctx context.Context, nos []string) ([]Grant, error)
}
