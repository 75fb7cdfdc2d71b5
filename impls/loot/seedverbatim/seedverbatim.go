// Package seedverbatim is the loot row "loot-seed-verbatim": source 004's
// logic exactly, on its tables in memory (or on MySQL or MariaDB through
// docsql's verbatim statements: SQLTables, what `onceproof matrix -subject
// loot -store mysql://...` runs), each statement of ref/loot/mysql/docsql
// one Env.Store call. Design says what a claim, a settle and a delivery
// run; its declaration derives its verdicts.
package seedverbatim

import (
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/onceproof/onceproof/engine"
	lootfaults "github.com/onceproof/onceproof/faults/loot"
	"github.com/onceproof/onceproof/ref/loot/mysql/docsql"
)

// Name is the row's name.
const Name = "loot-seed-verbatim"

// lockTTL is the document's loot.settle.lock-expire-millis, 10000.
const lockTTL = 10 * time.Second

// Design is the row. A claim is submitIntent: a read judged by the node's
// clock, then the upsert (created_at the node's clock in whole seconds,
// fair_score from the request, no membership check). A settle is
// LootSettleService.settle: SET NX PX for 10s, lockForSettle (the
// conditional UPDATE with the database's NOW() in seconds), selectRanked
// (its ORDER BY, ties in row order), insertGrantIgnore per winner
// (PENDING), markClosed, then GET and DEL. Items are delivered by the
// compensation job (each PENDING grant by its grant_no, then marked
// SUCCESS); there is no audit snapshot and nothing resumes a session a
// dead settler left SETTLING.
type Design struct{}

var (
	_ lootfaults.Design = Design{}
	_ engine.Declarer   = Design{}
)

func (Design) Name() string { return Name }

// Declare implements engine.Declarer.
func (Design) Declare() engine.Declaration { return declaration }

var declaration = engine.Declaration{
	Doc: "Source 004's logic verbatim: its tables, its LootMapper statements and its submitIntent and LootSettleService.settle as ref/loot/mysql/docsql runs them, in memory (and on MariaDB with -store mysql://, where every cell fails the same properties). Where it holds, the document's own defences do the work: the unique key (session, player) keeps one claim per player, the conditional UPDATE with the database's NOW() keeps settling to one settler after the deadline whatever its lock does (its GET-then-DEL release deletes another settler's lock under lock-expiry, harmlessly), and grants keyed by grant_no keep compensation from delivering twice.",
	Fails: []engine.Expect{{
		Families: []engine.Family{lootfaults.Families.LateClaim},
		Props:    []engine.Property{lootfaults.Properties.FrozenClaims, lootfaults.Properties.InWindow},
		Why:      "submitIntent checks CLAIMING and the deadline in one statement and upserts in another: a claim handler stalled between them just before the deadline upserts after lockForSettle froze the set, and answers accepted for a claim the result never saw; that upsert lands at or past the deadline by the database's clock (checked a tick before it, stalled a tick or more), so the claim it answers accepted was written outside the window",
	}, {
		Families: []engine.Family{lootfaults.Families.ClockSkew},
		Props:    []engine.Property{lootfaults.Properties.NoLostGrant, lootfaults.Properties.RuleOrder, lootfaults.Properties.Replayable, lootfaults.Properties.InWindow, lootfaults.Properties.HonestAnswer},
		Why:      "created_at is the node's clock, so of two NEED claims on nodes whose clocks differ by more than the time between them the later ranks first; submitIntent compares the deadline with LocalDateTime.now(), so a node whose clock runs ahead refuses a member's claim as too late while the database's clock is still before the deadline, and a node whose clock runs behind takes one at or after it (clock-skew's late claimer, on the node furthest behind): upsertIntent writes it and it is answered accepted outside the window, and lockForSettle, with the database's NOW(), freezes it in when it comes after; a scheduler on a node whose clock runs ahead triggers before the database's deadline, lockForSettle matches nothing, and nothing ever looks for a CLAIMING session past its deadline again: it is never settled; and two claims of equal priority and fairness that the skewed clocks stamp into one DATETIME second tie, which row order breaks one way and the recompute another, as under ties (rare: about 1 run in 700, so the cell runs lootprops.DeepN schedules)",
	}, {
		Families: []engine.Family{lootfaults.Families.Crash, lootfaults.Families.StoreError, lootfaults.Families.TimeoutSuccess},
		Props:    []engine.Property{lootfaults.Properties.NoLostGrant},
		Why:      "a settler that crashes, fails or times out after lockForSettle leaves the session SETTLING, which every retry's lockForSettle then refuses and which the compensation job (it only delivers PENDING grants) never resumes: the document's own most common incident; and a trigger that fails once is never followed by another",
	}, {
		Families: []engine.Family{lootfaults.Families.CancelRace},
		Props:    []engine.Property{lootfaults.Properties.NoOverGrant},
		Why:      "a cancel between lockForSettle and markClosed (the state table allows SETTLING -> CANCELED) is not seen by the settler, whose insertGrantIgnore writes PENDING grants and whose markClosed matches nothing; the compensation job delivers PENDING grants without looking at the session, so the canceled session delivers",
	}, {
		Families: []engine.Family{lootfaults.Families.Crash, lootfaults.Families.StoreError},
		Props:    []engine.Property{lootfaults.Properties.NoOverGrant},
		Why:      "the cancel-race harm reached through a fault: the fault families cancel a third of their sessions, half of those at the deadline right after the settle's trigger; a settle cut after insertGrantIgnore wrote its PENDING grants (a crash right after it, or a failed markClosed) leaves the session SETTLING, the cancel then cancels it (SETTLING -> CANCELED is on the table), and the compensation job delivers the PENDING grant without looking at the session. A timeout after the insert leaves the same state; timeout-after-success's 100 runs do not happen to draw it together with a cancel at the deadline (a sample, not a proof that they cannot)",
	}, {
		Families: []engine.Family{lootfaults.Families.Outsider, lootfaults.Families.TeamChange},
		Props:    []engine.Property{lootfaults.Properties.NoOverGrant, lootfaults.Properties.RuleOrder, lootfaults.Properties.MembersOnly},
		Why:      "submitIntent never checks the team, so an outsider's claim (in team-change, the claim of a member who left the team before the session opened, outside its snapshot) is recorded, ranked and, when it ranks first, granted and delivered in a member's place",
	}, {
		Families: []engine.Family{lootfaults.Families.IntentChange},
		Props:    []engine.Property{lootfaults.Properties.RuleOrder},
		Why:      "upsertIntent's ON DUPLICATE KEY UPDATE replaces intent_type and priority but keeps created_at, so a player who claimed early and changes its intent later ranks by its first row's time: an upgrade to NEED after another member's NEED ranks first, where the rule (the current intent's time) ranks it after; the rows it ranks are the rows it records, so a recompute agrees with it (Replayable holds), and nothing else in the family (one node's clock, no faults, claims in distinct seconds) touches another of its defects",
	}, {
		Families: []engine.Family{lootfaults.Families.Ties},
		Props:    []engine.Property{lootfaults.Properties.RuleOrder, lootfaults.Properties.Replayable},
		Why:      "created_at is a DATETIME, so claims in one second tie, and selectRanked's ORDER BY has no final key: the tie falls to whatever order the database returns: row order in memory, the order the claims were written in, not the rule's (at one instant, whichever node wrote first), and on MariaDB 10.11 often the unique key's (session, player) order, another order again, so a run can fail RuleOrder there and Replayable here; recomputing the session from its rows breaks the tie otherwise (the document's \"recompute and get the same result\" fails), and no snapshot records what was decided",
	}},
}

func (Design) NewCluster(db lootfaults.Clock) lootfaults.Cluster {
	return NewCluster(newMemTables(db.Now))
}

// NewCluster is the row's cluster on t, a fresh copy of the document's
// tables (one per run): in memory, or on MySQL or MariaDB (SQLTables).
func NewCluster(t Tables) lootfaults.Cluster { return &cluster{t: t} }

// Tables is the document's database: its three tables and the statements
// its code runs on them, each one Env.Store call of the caller's. Times
// are the database's clock where the document's SQL reads NOW(), and the
// caller's where its Java passes LocalDateTime.now().
type Tables interface {
	// CreateSession is createSession; a repeat fails with the unique
	// key's error.
	CreateSession(no, loot string, total int, deadline time.Time) error
	// CheckIntent is submitIntent's read, judged by the node's now.
	CheckIntent(no string, now time.Time) (bool, error)
	// UpsertIntent is upsertIntent.
	UpsertIntent(in docsql.Intent) error
	// LockForSettle is lockForSettle; it reports whether it matched.
	LockForSettle(no string) (bool, error)
	// SelectRanked is selectRanked, with the session's loot code and total
	// read alongside (the scheduler sends the session's own).
	SelectRanked(no string) (loot string, total int, ranked []int64, err error)
	// InsertGrantIgnore is insertGrantIgnore.
	InsertGrantIgnore(grantNo, no string, player int64, loot string) error
	// MarkClosed is markClosed.
	MarkClosed(no string, allocated int) error
	// Cancel is the status table's transition to CANCELED as one
	// conditional UPDATE; it reports whether it matched.
	Cancel(no string) (bool, error)
	// SelectPending is the compensation job's read of PENDING grants, in
	// row order.
	SelectPending() ([]Pending, error)
	// MarkSuccess marks a delivered grant SUCCESS.
	MarkSuccess(grantNo string) error
	// Read is session no as an auditor reads the rows (never an Env call).
	Read(no string) lootfaults.Record
}

// Pending is a PENDING grant row.
type Pending struct {
	GrantNo, Session, Loot string
	Player                 int64
}

// cluster is the tables and the token source.
type cluster struct {
	t      Tables
	tokens atomic.Uint64
}

// exec runs f as one statement named after the document's mapper method.
func (c *cluster) exec(env lootfaults.Env, s docsql.Statement, f func() error) error {
	return env.Store(s.Name, f)
}

func (c *cluster) Read(no string) lootfaults.Record { return c.t.Read(no) }

func (c *cluster) NewNode(_ int, env lootfaults.Env) lootfaults.Node { return &node{c: c, env: env} }

type node struct {
	c   *cluster
	env lootfaults.Env
}

var (
	_ lootfaults.Node      = (*node)(nil)
	_ lootfaults.Recoverer = (*node)(nil)
)

func (n *node) Handle(_ time.Time, r lootfaults.Req) (engine.Ack, error) {
	c := n.c
	switch r.Kind {
	case lootfaults.Kinds.OpenSession:
		err := c.exec(n.env, docsql.CreateSession, func() error {
			return c.t.CreateSession(r.Spec.No, r.Spec.Loot, r.Spec.Quantity, r.Spec.Deadline)
		})
		if err != nil {
			return engine.Nack, err
		}
		return lootfaults.Accepted, nil
	case lootfaults.Kinds.StartClaims:
		// The document opens sessions straight to CLAIMING and has no
		// endpoint for this step.
		return lootfaults.Noted, nil
	case lootfaults.Kinds.ClaimItem:
		return n.submitIntent(r)
	case lootfaults.Kinds.SettleNow:
		if err := n.settle(r.Session); err != nil {
			return engine.Nack, err
		}
		return lootfaults.Noted, nil // {"code":0,"message":"settle triggered"}
	case lootfaults.Kinds.CancelSession:
		return n.cancel(r.Session)
	}
	if err := n.compensate(); err != nil {
		return engine.Nack, err
	}
	return lootfaults.Noted, nil
}

// Recover implements lootfaults.Recoverer: the compensation job is all the
// document has.
func (n *node) Recover(time.Time) error { return n.compensate() }

// submitIntent checks the session's status and deadline by the node's
// clock, then upserts: two statements.
func (n *node) submitIntent(r lootfaults.Req) (engine.Ack, error) {
	c, now := n.c, n.env.Now()
	var ok bool
	if err := c.exec(n.env, docsql.CheckIntent, func() error {
		var err error
		ok, err = c.t.CheckIntent(r.Session, now)
		return err
	}); err != nil {
		return engine.Nack, err
	}
	if !ok {
		return lootfaults.Refused, nil // {"code":1001,"accepted":false}
	}
	in := docsql.NewIntent(r.Session, int64(r.Player), string(r.Intent), int(r.Fair), datetime(now))
	if err := c.exec(n.env, docsql.UpsertIntent, func() error { return c.t.UpsertIntent(in) }); err != nil {
		return engine.Nack, err
	}
	return lootfaults.Accepted, nil
}

// settle is LootSettleService.settle.
func (n *node) settle(no string) error {
	c := n.c
	key, token := "loot:settle:lock:"+no, fmt.Sprintf("uuid-%d", c.tokens.Add(1))
	locked, err := n.env.SetNX(key, token, lockTTL)
	if err != nil {
		return err
	}
	if !locked {
		return nil // someone else is settling
	}
	defer func() {
		// Only the holder releases: GET, compare, DEL.
		if cur, err := n.env.Get(key); err == nil && cur == token {
			_ = n.env.Del(key)
		}
	}()
	var affected bool
	if err := c.exec(n.env, docsql.LockForSettle, func() error {
		var err error
		affected, err = c.t.LockForSettle(no)
		return err
	}); err != nil || !affected {
		return err
	}
	var (
		ranked   []int64
		lootCode string
		total    int
	)
	if err := c.exec(n.env, docsql.SelectRanked, func() error {
		var err error
		lootCode, total, ranked, err = c.t.SelectRanked(no)
		return err
	}); err != nil {
		return err
	}
	count := min(total, len(ranked))
	for _, p := range ranked[:count] {
		grantNo := docsql.GrantNo(no, p, lootCode)
		if err := c.exec(n.env, docsql.InsertGrantIgnore, func() error {
			return c.t.InsertGrantIgnore(grantNo, no, p, lootCode)
		}); err != nil {
			return err
		}
	}
	return c.exec(n.env, docsql.MarkClosed, func() error { return c.t.MarkClosed(no, count) })
}

// cancel follows LootSessionStatus: OPEN, CLAIMING, SETTLING -> CANCELED
// (the document shows no statement; this is the table's transition as
// one conditional UPDATE).
func (n *node) cancel(no string) (engine.Ack, error) {
	c := n.c
	var done bool
	if err := c.exec(n.env, docsql.CancelSession, func() error {
		var err error
		done, err = c.t.Cancel(no)
		return err
	}); err != nil {
		return engine.Nack, err
	}
	if !done {
		return lootfaults.Refused, nil
	}
	return lootfaults.Accepted, nil
}

// compensate is the timed job: every PENDING grant is delivered by its
// grant number and marked SUCCESS. Nothing in it looks at the session.
func (n *node) compensate() error {
	c := n.c
	var pending []Pending
	if err := c.exec(n.env, docsql.SelectPending, func() error {
		var err error
		pending, err = c.t.SelectPending()
		return err
	}); err != nil {
		return err
	}
	var errs []error
	for _, g := range pending {
		if _, err := n.env.Deliver(g.GrantNo, lootfaults.Item{Session: g.Session, Player: lootfaults.PlayerID(g.Player), Loot: g.Loot}); err != nil {
			errs = append(errs, err)
			continue
		}
		if err := c.exec(n.env, docsql.MarkSuccess, func() error { return c.t.MarkSuccess(g.GrantNo) }); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
