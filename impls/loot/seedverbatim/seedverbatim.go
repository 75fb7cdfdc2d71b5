// Package seedverbatim is the loot row "loot-seed-verbatim": source 004's
// logic exactly, on its tables in memory, each statement of
// ref/loot/mysql/docsql one Env.Store call. A claim is submitIntent: a
// read judged by the node's clock, then the upsert (created_at the node's
// clock in whole seconds, fair_score from the request, no membership
// check). A settle is LootSettleService.settle: SET NX PX for 10s,
// lockForSettle (the conditional UPDATE with the database's NOW() in
// seconds), selectRanked (its ORDER BY, ties in row order),
// insertGrantIgnore per winner (PENDING), markClosed, then GET and DEL.
// Items are delivered by the compensation job (each PENDING grant by its
// grant_no, then marked SUCCESS); there is no audit snapshot and nothing
// resumes a session a dead settler left SETTLING. Its declaration derives
// its verdicts.
package seedverbatim

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/onceproof/onceproof/engine"
	"github.com/onceproof/onceproof/lootworld"
	"github.com/onceproof/onceproof/ref/loot/mysql/docsql"
)

// Name is the row's name.
const Name = "loot-seed-verbatim"

// lockTTL is the document's loot.settle.lock-expire-millis, 10000.
const lockTTL = 10 * time.Second

// Design is the row.
type Design struct{}

var (
	_ lootworld.Design = Design{}
	_ engine.Declarer  = Design{}
)

func (Design) Name() string { return Name }

// Declare implements engine.Declarer.
func (Design) Declare() engine.Declaration { return declaration }

var declaration = engine.Declaration{
	Doc: "Source 004's logic verbatim: its tables, its LootMapper statements and its submitIntent and LootSettleService.settle as ref/loot/mysql/docsql runs them, in memory. Where it holds, the document's own defences do the work: the unique key (session, player) keeps one claim per player, the conditional UPDATE with the database's NOW() keeps settling to one settler after the deadline whatever its lock does (its GET-then-DEL release deletes another settler's lock under lock-expiry, harmlessly), and grants keyed by grant_no keep compensation from delivering twice.",
	Fails: []engine.Expect{{
		Families: []engine.Family{lootworld.LateClaim},
		Props:    []engine.Property{lootworld.FrozenClaims},
		Why:      "submitIntent checks CLAIMING and the deadline in one statement and upserts in another: a claim handler stalled between them just before the deadline upserts after lockForSettle froze the set, and answers accepted for a claim the result never saw",
	}, {
		Families: []engine.Family{lootworld.ClockSkew},
		Props:    []engine.Property{lootworld.NoLostGrant, lootworld.RuleOrder, lootworld.Replayable, lootworld.HonestAnswer},
		Why:      "created_at is the node's clock, so of two NEED claims on nodes whose clocks differ by more than the time between them the later ranks first; submitIntent compares the deadline with LocalDateTime.now(), so a node whose clock runs ahead refuses a member's claim as too late while the database's clock is still before the deadline; a scheduler on a node whose clock runs ahead triggers before the database's deadline, lockForSettle matches nothing, and nothing ever looks for a CLAIMING session past its deadline again: it is never settled; and two claims of equal priority and fairness that the skewed clocks stamp into one DATETIME second tie, which row order breaks one way and the recompute another, as under ties (rare: about 1 run in 700, so the cell runs lootprops.DeepN schedules)",
	}, {
		Families: []engine.Family{lootworld.Crash, lootworld.StoreError, lootworld.TimeoutSuccess},
		Props:    []engine.Property{lootworld.NoLostGrant},
		Why:      "a settler that crashes, fails or times out after lockForSettle leaves the session SETTLING, which every retry's lockForSettle then refuses and which the compensation job (it only delivers PENDING grants) never resumes: the document's own most common incident; and a trigger that fails once is never followed by another",
	}, {
		Families: []engine.Family{lootworld.CancelRace},
		Props:    []engine.Property{lootworld.NoOverGrant},
		Why:      "a cancel between lockForSettle and markClosed (the state table allows SETTLING -> CANCELED) is not seen by the settler, whose insertGrantIgnore writes PENDING grants and whose markClosed matches nothing; the compensation job delivers PENDING grants without looking at the session, so the canceled session delivers",
	}, {
		Families: []engine.Family{lootworld.Outsider},
		Props:    []engine.Property{lootworld.NoOverGrant, lootworld.RuleOrder, lootworld.MembersOnly},
		Why:      "submitIntent never checks the team, so an outsider's claim is recorded, ranked and, when it ranks first, granted and delivered in a member's place",
	}, {
		Families: []engine.Family{lootworld.Ties},
		Props:    []engine.Property{lootworld.RuleOrder, lootworld.Replayable},
		Why:      "created_at is a DATETIME, so claims in one second tie, and selectRanked's ORDER BY has no final key: the tie falls to row order, which is the order the claims were written in, not the rule's (at one instant, whichever node wrote first); recomputing the session from its rows breaks the tie otherwise (the document's \"recompute and get the same result\" fails), and no snapshot records what was decided",
	}},
}

func (Design) NewCluster(db lootworld.Clock) lootworld.Cluster {
	return &cluster{now: db.Now, sessions: map[string]*session{}, intents: map[string][]intent{}, grants: map[string]*grant{}}
}

// The document's tables (schema.sql), as rows.
type session struct {
	loot     string
	total    int
	alloc    int
	status   string
	deadline time.Time // DATETIME: whole seconds
	version  int
}

type intent struct {
	player    int64
	kind      string
	priority  int
	fairScore int64
	createdAt time.Time // DATETIME: whole seconds
}

type grant struct {
	session string
	player  int64
	loot    string
	status  string // PENDING, SUCCESS
}

// cluster is the database (one mutex: one statement at a time) and the
// token source.
type cluster struct {
	mu       sync.Mutex
	now      func() time.Time
	sessions map[string]*session
	intents  map[string][]intent // per session, in row (insertion) order
	grants   map[string]*grant   // by grant_no
	order    []string            // grant_no in insertion order
	tokens   atomic.Uint64
}

// datetime is t as a DATETIME column keeps it: whole seconds.
func datetime(t time.Time) time.Time { return t.Truncate(time.Second) }

// exec runs f as one statement named after the document's mapper method.
func (c *cluster) exec(env lootworld.Env, s docsql.Statement, f func(now time.Time) error) error {
	return env.Store(s.Name, func() error {
		c.mu.Lock()
		defer c.mu.Unlock()
		return f(c.now())
	})
}

func (c *cluster) NewNode(_ int, env lootworld.Env) lootworld.Node { return &node{c: c, env: env} }

type node struct {
	c   *cluster
	env lootworld.Env
}

var (
	_ lootworld.Node      = (*node)(nil)
	_ lootworld.Recoverer = (*node)(nil)
)

// errDuplicate is MySQL's duplicate key error on uk_session_no: the
// document's createSession is a plain INSERT.
var errDuplicate = errors.New("Duplicate entry for key 'uk_session_no'")

func (n *node) Handle(_ time.Time, r lootworld.Req) (engine.Ack, error) {
	c := n.c
	switch r.Kind {
	case lootworld.OpenSession:
		err := c.exec(n.env, docsql.CreateSession, func(time.Time) error {
			if _, ok := c.sessions[r.Spec.No]; ok {
				return errDuplicate
			}
			c.sessions[r.Spec.No] = &session{loot: r.Spec.Loot, total: r.Spec.Quantity, status: "CLAIMING", deadline: datetime(r.Spec.Deadline)}
			return nil
		})
		if err != nil {
			return engine.Nack, err
		}
		return lootworld.Accepted, nil
	case lootworld.StartClaims:
		// The document opens sessions straight to CLAIMING and has no
		// endpoint for this step.
		return lootworld.Noted, nil
	case lootworld.ClaimItem:
		return n.submitIntent(r)
	case lootworld.SettleNow:
		if err := n.settle(r.Session); err != nil {
			return engine.Nack, err
		}
		return lootworld.Noted, nil // {"code":0,"message":"settle triggered"}
	case lootworld.CancelSession:
		return n.cancel(r.Session)
	}
	if err := n.compensate(); err != nil {
		return engine.Nack, err
	}
	return lootworld.Noted, nil
}

// Recover implements lootworld.Recoverer: the compensation job is all the
// document has.
func (n *node) Recover(time.Time) error { return n.compensate() }

// submitIntent checks the session's status and deadline by the node's
// clock, then upserts: two statements.
func (n *node) submitIntent(r lootworld.Req) (engine.Ack, error) {
	c, now := n.c, n.env.Now()
	var ok bool
	if err := c.exec(n.env, docsql.CheckIntent, func(time.Time) error {
		s := c.sessions[r.Session]
		ok = s != nil && s.status == "CLAIMING" && now.Before(s.deadline)
		return nil
	}); err != nil {
		return engine.Nack, err
	}
	if !ok {
		return lootworld.Refused, nil // {"code":1001,"accepted":false}
	}
	prio := map[lootworld.Intent]int{lootworld.Need: 10, lootworld.Greed: 1}[r.Intent]
	if err := c.exec(n.env, docsql.UpsertIntent, func(time.Time) error {
		rows := c.intents[r.Session]
		for i := range rows {
			if rows[i].player == int64(r.Player) { // ON DUPLICATE KEY UPDATE: created_at kept
				rows[i].kind, rows[i].priority, rows[i].fairScore = string(r.Intent), prio, r.Fair
				return nil
			}
		}
		c.intents[r.Session] = append(rows, intent{int64(r.Player), string(r.Intent), prio, r.Fair, datetime(now)})
		return nil
	}); err != nil {
		return engine.Nack, err
	}
	return lootworld.Accepted, nil
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
	if err := c.exec(n.env, docsql.LockForSettle, func(now time.Time) error {
		s := c.sessions[no]
		if s != nil && s.status == "CLAIMING" && !s.deadline.After(datetime(now)) {
			s.status, s.version, affected = "SETTLING", s.version+1, true
		}
		return nil
	}); err != nil || !affected {
		return err
	}
	// The controller passes lootCode and totalQuantity from the request
	// body; the scheduler that triggers here sends the session's own,
	// read with its rows.
	var ranked []int64
	var lootCode string
	var total int
	if err := c.exec(n.env, docsql.SelectRanked, func(time.Time) error {
		lootCode, total = c.sessions[no].loot, c.sessions[no].total
		var rs []intent
		for _, r := range c.intents[no] {
			if r.kind != "PASS" {
				rs = append(rs, r)
			}
		}
		slices.SortStableFunc(rs, func(a, b intent) int {
			return cmp.Or(cmp.Compare(b.priority, a.priority), cmp.Compare(a.fairScore, b.fairScore), a.createdAt.Compare(b.createdAt))
		})
		for _, r := range rs {
			ranked = append(ranked, r.player)
		}
		return nil
	}); err != nil {
		return err
	}
	count := min(total, len(ranked))
	for _, p := range ranked[:count] {
		grantNo := docsql.GrantNo(no, p, lootCode)
		if err := c.exec(n.env, docsql.InsertGrantIgnore, func(time.Time) error {
			if c.grants[grantNo] == nil {
				c.grants[grantNo] = &grant{session: no, player: p, loot: lootCode, status: "PENDING"}
				c.order = append(c.order, grantNo)
			}
			return nil
		}); err != nil {
			return err
		}
	}
	return c.exec(n.env, docsql.MarkClosed, func(time.Time) error {
		if s := c.sessions[no]; s.status == "SETTLING" {
			s.status, s.alloc, s.version = "CLOSED", count, s.version+1
		}
		return nil
	})
}

// cancel follows LootSessionStatus: OPEN, CLAIMING, SETTLING -> CANCELED
// (the document shows no statement; this is the table's transition as
// one conditional UPDATE).
func (n *node) cancel(no string) (engine.Ack, error) {
	c := n.c
	var done bool
	cancelStmt := docsql.Statement{Name: "cancel"}
	if err := c.exec(n.env, cancelStmt, func(time.Time) error {
		if s := c.sessions[no]; s != nil && (s.status == "OPEN" || s.status == "CLAIMING" || s.status == "SETTLING") {
			s.status, done = "CANCELED", true
		}
		return nil
	}); err != nil {
		return engine.Nack, err
	}
	if !done {
		return lootworld.Refused, nil
	}
	return lootworld.Accepted, nil
}

// compensate is the timed job: every PENDING grant is delivered by its
// grant number and marked SUCCESS. Nothing in it looks at the session.
func (n *node) compensate() error {
	c := n.c
	type row struct {
		no string
		g  grant
	}
	var pending []row
	if err := c.exec(n.env, docsql.Statement{Name: "selectPending"}, func(time.Time) error {
		for _, no := range c.order {
			if g := c.grants[no]; g.status == "PENDING" {
				pending = append(pending, row{no, *g})
			}
		}
		return nil
	}); err != nil {
		return err
	}
	var errs []error
	for _, p := range pending {
		no, g := p.no, p.g
		if _, err := n.env.Deliver(no, lootworld.Item{Session: g.session, Player: lootworld.PlayerID(g.player), Loot: g.loot}); err != nil {
			errs = append(errs, err)
			continue
		}
		if err := c.exec(n.env, docsql.Statement{Name: "markSuccess"}, func(time.Time) error {
			c.grants[no].status = "SUCCESS"
			return nil
		}); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Read implements lootworld.Cluster: the document's rows as the world
// reads them; it keeps no audit snapshot.
func (c *cluster) Read(no string) lootworld.Record {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.sessions[no]
	if s == nil {
		return lootworld.Record{}
	}
	rec := lootworld.Record{Status: lootworld.Status(s.status)}
	for _, r := range c.intents[no] {
		rec.Claims = append(rec.Claims, lootworld.Claim{Player: lootworld.PlayerID(r.player), Intent: lootworld.Intent(r.kind), At: r.createdAt, Fair: r.fairScore})
	}
	slices.SortFunc(rec.Claims, func(a, b lootworld.Claim) int { return cmp.Compare(a.Player, b.Player) })
	for _, gno := range c.order {
		if g := c.grants[gno]; g.session == no {
			rec.Granted = append(rec.Granted, lootworld.PlayerID(g.player))
		}
	}
	return rec
}
