package shortcut

import (
	"github.com/onceproof/onceproof/engine"
	lootfaults "github.com/onceproof/onceproof/faults/loot"
	"github.com/onceproof/onceproof/impls/loot/internal/table"
	"github.com/onceproof/onceproof/ref/loot"
)

// The shortcut rows, one Row each: the reference with one rule broken, and
// a declaration that derives its verdicts. impls/loot's All lists them in
// matrix row order.
//
// None declares intent-change, because every row holds there: its claims
// are table.Store's write, which takes the change's time on another intent
// and keeps it on a repeat (the rule RuleOrder judges), and the family has
// none of what a row's one broken rule needs to show: no fault, stall,
// early or concurrent trigger, cancel, skewed clock or outsider (the
// world rules keep those in their columns), claims only before second 9
// (check-then-claim needs a claim stalled at the deadline), and members
// only (no-membership's claims are the reference's for members).
var (
	// SelectThenUpdate is the row "select-then-update": the settle CAS is a
	// read the application judges, then an unconditional write.
	SelectThenUpdate = Row{
		Row:   "select-then-update",
		Rules: table.Rules{SelectThenUpdate: true},
		Decl: engine.Declaration{
			Doc: "The reference whose settle CAS is split in two: a SELECT of the row that the application judges (CLAIMING, past the deadline, or a lapsed lease), then an UPDATE to SETTLING with the next fence that judges nothing: source 004's \"selsect 出来判断 status 再 update\". The settle lock and the fenced record still stand in front of and behind it, so most races are still caught; what gets through is a write landing on a row that changed between the two statements.",
			Fails: []engine.Expect{{
				Families: []engine.Family{lootfaults.Families.LockExpiry, lootfaults.Families.CompensationRace},
				Props:    []engine.Property{lootfaults.Properties.ForwardOnly},
				Why:      "a settler reads CLAIMING, then stalls before its UPDATE past the lock's ttl and its lease; a second trigger (in compensation-race, whose stall may land at any settle call from the first on, the compensation tick's Recover, which settles the overdue session) takes the expired lock and settles the session to CLOSED; the first wakes and writes SETTLING over CLOSED (a closed session goes back), though its record is then refused by the fence (its value is stale), so nothing is granted twice",
			}, {
				Families: []engine.Family{lootfaults.Families.CancelRace},
				Props:    []engine.Property{lootfaults.Properties.NoOverGrant, lootfaults.Properties.ForwardOnly, lootfaults.Properties.HonestAnswer},
				Why:      "a cancel interleaved between the settler's SELECT (CLAIMING) and its UPDATE is overwritten: CANCELED goes back to SETTLING, the fence the UPDATE bumped is the settler's, so its record closes the session and its item is delivered from a session the operator canceled; the cancel's accepted reply, if the overwrite lands before it, tells the operator canceled about a session that is no longer",
			}},
		},
	}

	// LockOnly is the row "lock-only": no conditional write at all in the
	// settle; the lock is the only guard.
	LockOnly = Row{
		Row:   "lock-only",
		Rules: table.Rules{NoCAS: true},
		Decl: engine.Declaration{
			Doc: "The reference with no conditional write in its settle at all: BeginSettle writes SETTLING with the next fence whatever the row says, and RecordGrants closes the session with its grants whatever its status and fence; the Redis lock (SET NX PX, compare-and-delete) is the only thing between two settlers. Claims are still judged in their write, and every delivery is keyed by the recorded grant number, so no item is granted twice: what breaks is the state machine and the deadline.",
			Fails: []engine.Expect{{
				Families: []engine.Family{lootfaults.Families.DuplicateClaim, lootfaults.Families.ConcurrentSettle, lootfaults.Families.LockExpiry, lootfaults.Families.Crash, lootfaults.Families.StoreError, lootfaults.Families.TimeoutSuccess, lootfaults.Families.CompensationRace},
				Props:    []engine.Property{lootfaults.Properties.ForwardOnly},
				Why:      "a second settle after the first released its lock (a trigger on another node, a copy of the trigger that duplicate-claim delivers again a moment or seconds later, a retry after a lost answer or a failed call, or one that takes a lock whose holder stalled past its ttl: in compensation-race the settler stalls at any of its calls from the first on, so one stalled before its BeginSettle past the lock's ttl wakes after compensation's Recover took the expired lock and closed the session) meets no refusal: its BeginSettle writes SETTLING over CLOSED and its record closes the session again; the grant numbers and the ranking are the same, so the inventory applies nothing twice",
			}, {
				Families: []engine.Family{lootfaults.Families.ConcurrentSettle},
				Props:    []engine.Property{lootfaults.Properties.HonestAnswer},
				Why:      "when the second settler takes the lock in the step between the first's unlock and its answer, and writes SETTLING before that answer, the first answers accepted about a session that is SETTLING again (the second closes it a moment later, with the same grants): rare, one interleaving in about 500, so the cell runs lootprops.DeepN schedules",
			}, {
				Families: []engine.Family{lootfaults.Families.EarlySettle, lootfaults.Families.ClockSkew},
				Props:    []engine.Property{lootfaults.Properties.OnTime, lootfaults.Properties.ForwardOnly},
				Why:      "nothing judges the deadline: a trigger before it (a player, or a scheduler whose clock runs ahead) freezes and settles the session early, and the scheduler's own trigger at the deadline settles it again over CLOSED",
			}, {
				Families: []engine.Family{lootfaults.Families.CancelRace},
				Props:    []engine.Property{lootfaults.Properties.NoOverGrant, lootfaults.Properties.ForwardOnly, lootfaults.Properties.HonestAnswer},
				Why:      "a cancel before or during the settle is overwritten: BeginSettle writes CANCELED back to SETTLING and the record closes it and grants, so a canceled session delivers its item; and when the settle lands while the cancel's reply is on the wire, the operator is told canceled about a session that is CLOSED",
			}, {
				Families: []engine.Family{lootfaults.Families.Crash, lootfaults.Families.StoreError, lootfaults.Families.TimeoutSuccess},
				Props:    []engine.Property{lootfaults.Properties.NoOverGrant},
				Why:      "the fault families cancel a third of their sessions, half of those a second before the deadline: with no fault at all the settle at the deadline then writes CANCELED back to SETTLING and closes and grants, as under cancel-race, so the canceled session delivers its item (no HonestAnswer here: nothing interleaves, so no settle lands while the cancel's reply is on the wire)",
			}},
		},
	}

	// UUIDGrantKey is the row "uuid-grant-key": every grant is delivered
	// under a fresh key (a UUID per call) instead of its recorded grant
	// number.
	UUIDGrantKey = Row{
		Row:  "uuid-grant-key",
		Wire: Rekeyed(func(Wiring) bool { return true }),
		Decl: engine.Declaration{
			Doc: "The reference delivering every grant under a fresh key (a UUID per call) instead of its recorded grant number: the key source 004 warns against (\"千万不要用 UUID 做幂等键\"). Grants are still recorded once, by their grant number, and the settler delivers its own grants once; the inventory can no longer recognise a second delivery of the same grant.",
			Fails: []engine.Expect{{
				Families: []engine.Family{lootfaults.Families.Crash, lootfaults.Families.StoreError, lootfaults.Families.TimeoutSuccess, lootfaults.Families.CompensationRace},
				Props:    []engine.Property{lootfaults.Properties.NoOverGrant, lootfaults.Properties.NoDupGrant},
				Why:      "a delivery that landed but whose grant stayed PENDING (the node crashed before marking it, the mark failed, or the inventory call timed out after applying the item; or, in compensation-race, the settler stalled between its delivery and its mark) is delivered again by compensation once its lease ends, under a new key: the inventory applies it, and the winner holds two items of a drop of one",
			}},
		},
	}

	// NonatomicUnlock is the row "nonatomic-unlock": the settle lock is
	// released as source 004 does, GET then DEL (two calls, getThenDel),
	// instead of one compare-and-delete.
	NonatomicUnlock = Row{
		Row:  "nonatomic-unlock",
		Wire: func(c *loot.Config, w Wiring) { c.Lock = getThenDel{w.Env} },
		Decl: engine.Declaration{
			Doc: "The reference releasing its settle lock as source 004 does: GET the key, and DEL it if it holds our token, two calls instead of one compare-and-delete. A settler that stalls between the two can delete the lock a second settler took after its ttl ended (the runs reach it: foreign-unlock under lock-expiry). It holds everywhere: the lock is an optimisation, and the settle CAS and the fence refuse whatever a third settler let in by that deletion would write. Its defence is redundant behind the CAS: a finding, not a fix.",
		},
	}

	// NoMembership is the row "no-membership": a claim is not judged
	// against the team snapshot.
	NoMembership = Row{
		Row:   "no-membership",
		Rules: table.Rules{NoMembership: true},
		Decl: engine.Declaration{
			Doc: "The reference whose claim is not judged against the team snapshot: source 004's submitIntent, which checks status and deadline but never membership (a claim with a known session number is enough).",
			Fails: []engine.Expect{{
				Families: []engine.Family{lootfaults.Families.Outsider, lootfaults.Families.TeamChange},
				Props:    []engine.Property{lootfaults.Properties.NoLostGrant, lootfaults.Properties.MembersOnly},
				Why:      "an outsider's claim (in team-change, that of a member who left before the session opened, outside its snapshot) is recorded (the team snapshot is never read); the reference's settler then refuses to record a result its own audit would not replay (Decide replays the snapshot, and a non-member's claim fails it), so every settle and takeover stops there and the session stays SETTLING with no winner served: the write-time check is what keeps the settle possible",
			}},
		},
	}

	// NoDeadlineInCAS is the row "no-deadline-in-cas": the settle CAS does
	// not judge the deadline.
	NoDeadlineInCAS = Row{
		Row:   "no-deadline-in-cas",
		Rules: table.Rules{NoDeadlineInCAS: true},
		Decl: engine.Declaration{
			Doc: "The reference whose settle CAS does not judge the deadline: CLAIMING becomes SETTLING whenever a settler asks. Source 004's own conditional UPDATE has the deadline (\"deadline_at <= NOW()\") and says why: a settle triggered early would skip the claim window.",
			Fails: []engine.Expect{{
				Families: []engine.Family{lootfaults.Families.EarlySettle, lootfaults.Families.ClockSkew},
				Props:    []engine.Property{lootfaults.Properties.OnTime},
				Why:      "a trigger before the deadline (a player's, or a scheduler whose clock runs ahead) wins the CAS and freezes the claims early; members claiming in the rest of the window are refused, honestly, and the result stands",
			}},
		},
	}

	// ClosedBeforeGrants is the row "closed-before-grants": the session
	// closes in one statement and its grants are inserted in a second.
	ClosedBeforeGrants = Row{
		Row:   "closed-before-grants",
		Rules: table.Rules{ClosedBeforeGrants: true},
		Decl: engine.Declaration{
			Doc: "The reference whose record is two statements: the session closes (with its snapshot) first, its PENDING grants are inserted second, as a settler does that marks a session closed before it writes what closing means.",
			Fails: []engine.Expect{{
				Families: []engine.Family{lootfaults.Families.Crash, lootfaults.Families.StoreError, lootfaults.Families.TimeoutSuccess},
				Props:    []engine.Property{lootfaults.Properties.NoLostGrant, lootfaults.Properties.Replayable},
				Why:      "a crash between the two statements, a failed insert, or a close that timed out after it landed (the settler gives up, and its retry finds the session CLOSED: already settled) leaves a CLOSED session whose snapshot names winners and no grant row: compensation delivers only grants it can lease, so the winners never get their items, and the snapshot's winners are not the grants on record",
			}},
		},
	}

	// CompensationNewKey is the row "compensation-new-key": compensation
	// (Recover) delivers a pending grant under a fresh key, while the
	// settler delivers under the recorded grant number.
	CompensationNewKey = Row{
		Row:  "compensation-new-key",
		Wire: Rekeyed(func(w Wiring) bool { return w.Compensating.Load() }),
		Decl: engine.Declaration{
			Doc: "The reference whose compensation (Recover) delivers a PENDING grant under a fresh key, while the settler delivers under the recorded grant number: a compensation job that re-keys its retries, which source 004 forbids (\"补偿任务同样要用幂等键去重，不能因为补偿就重发一次\").",
			Fails: []engine.Expect{{
				Families: []engine.Family{lootfaults.Families.Crash, lootfaults.Families.StoreError, lootfaults.Families.TimeoutSuccess, lootfaults.Families.CompensationRace},
				Props:    []engine.Property{lootfaults.Properties.NoOverGrant, lootfaults.Properties.NoDupGrant},
				Why:      "the same as uuid-grant-key, because the settler never delivers a grant twice on its own: every second delivery comes from compensation, after a delivery that landed but stayed PENDING (a crash before the mark, a failed mark, a timeout after the item was applied, or a settler stalled between delivery and mark while compensation's lease ended); re-keying compensation alone is as bad as re-keying everything",
			}},
		},
	}

	// AppClockDeadline is the row "app-clock-deadline": deadlines are
	// judged by the node's clock, not the database's.
	AppClockDeadline = Row{
		Row:      "app-clock-deadline",
		AppClock: true,
		Decl: engine.Declaration{
			Doc: "The reference judging deadlines by the node's clock instead of the database's, in the claim's write and the settle CAS: source 004's submitIntent compares with LocalDateTime.now() on the node serving the request.",
			Fails: []engine.Expect{{
				Families: []engine.Family{lootfaults.Families.ClockSkew},
				Props:    []engine.Property{lootfaults.Properties.OnTime, lootfaults.Properties.InWindow, lootfaults.Properties.HonestAnswer},
				Why:      "a node whose clock runs ahead judges the deadline passed before the database's clock reaches it: its scheduler's trigger wins the CAS early, and the claim window closes seconds short on it: a member's claim there is refused as too late while the session is CLAIMING before its deadline, so the player loses the item without anything recording it (claims stay stamped by the database's clock, so the ranking stands); and a node whose clock runs behind keeps the window open past the database's deadline: a member's claim there at the deadline or just after it (clock-skew's late claimer, on the node furthest behind, under the 1s smallest skew) is written and answered accepted, and the settle, not due by that node's clock or coming later from it, freezes it in",
			}},
		},
	}

	// CheckThenClaim is the row "check-then-claim": a claim is judged by a
	// read, then written by an unconditional upsert.
	CheckThenClaim = Row{
		Row:   "check-then-claim",
		Rules: table.Rules{CheckThenClaim: true},
		Decl: engine.Declaration{
			Doc: "The reference whose claim is judged by a read (member, CLAIMING, before the deadline) and written by an unconditional upsert, two statements: source 004's submitIntent (\"先校验后写\").",
			Fails: []engine.Expect{{
				Families: []engine.Family{lootfaults.Families.LateClaim},
				Props:    []engine.Property{lootfaults.Properties.FrozenClaims, lootfaults.Properties.InWindow},
				Why:      "a claim handler stalled between its check and its upsert, just before the deadline, writes its claim after the settle at the deadline froze the set: the claim is answered accepted although the result was computed without it; and its upsert lands at or past the deadline by the database's clock (the check a tick before the deadline, a stall of a tick or more after it), so the claim answered accepted was written outside the window (InWindow judges the write's time, which the check before it does not move)",
			}},
		},
	}
)
