// Package notiebreak is the loot row "no-tiebreak": the reference ranking
// claims by priority, fairness and claim time only, as source 004's ORDER
// BY does, so claims equal on all three come out in the order their rows
// were read. ref/loot.Decide ranks by the session's registered rule,
// which ends on the player id, so this row settles through its own
// rendering of Settle's steps (lock, CAS, fairness, rank, record,
// deliver) around the ranking it swaps. Its declaration derives its
// verdicts.
package notiebreak

import (
	"cmp"
	"context"
	"encoding/hex"
	"errors"
	"slices"
	"time"

	"github.com/onceproof/onceproof/engine"
	lootfaults "github.com/onceproof/onceproof/faults/loot"
	"github.com/onceproof/onceproof/impls/loot/internal/table"
	"github.com/onceproof/onceproof/impls/loot/lootref"
	"github.com/onceproof/onceproof/ref/loot"
)

// Name is the row's name.
const Name = "no-tiebreak"

// Design is the row.
type Design struct{}

var (
	_ lootfaults.Design = Design{}
	_ engine.Declarer   = Design{}
)

func (Design) Name() string { return Name }

// Declare implements engine.Declarer.
func (Design) Declare() engine.Declaration { return declaration }

// It holds in intent-change: its claims are the reference's (a change takes
// the change's time), and two claims there never share an instant (each
// starts in a second of its own), so its missing final key never decides.
var declaration = engine.Declaration{
	Doc: "The reference ranking by priority, fairness and claim time only, as source 004's ORDER BY does (\"三级排序之后结果唯一，不存在并列\": after three levels the result is unique, it says), with the frozen claims read in row order. Claim times are kept at microseconds by the database's clock, so only claims written at one instant tie.",
	Fails: []engine.Expect{{
		Families: []engine.Family{lootfaults.Families.Ties},
		Props:    []engine.Property{lootfaults.Properties.RuleOrder, lootfaults.Properties.Replayable},
		Why:      "two NEED claims of equal fairness written at one instant tie on all three keys, and the winner is whichever row was written first (the interleaving's choice), not the lower player id the rule ends on; the audit snapshot, replayed by the rule, names the other player",
	}},
}

func (Design) NewCluster(db lootfaults.Clock) lootfaults.Cluster {
	return &cluster{db: table.NewDB(db.Now)}
}

type cluster struct {
	db     *table.DB
	tokens lootref.Tokens
}

func (c *cluster) NewNode(_ int, env lootfaults.Env) lootfaults.Node {
	cfg := lootref.Config(env, table.Store{DB: c.db, Env: env, Rules: table.Rules{RowOrder: true}}, &c.tokens)
	return node{Node: lootref.New(cfg), cfg: cfg}
}

func (c *cluster) Read(no string) lootfaults.Record { return lootref.Read(table.Store{DB: c.db}, no) }

// node is the reference's node whose settles rank without the tiebreak.
type node struct {
	lootref.Node
	cfg loot.Config
}

// Handle implements lootfaults.Node: a settle through settle, the rest as
// the reference.
func (n node) Handle(now time.Time, r lootfaults.Req) (engine.Ack, error) {
	if r.Kind != lootfaults.Kinds.SettleNow {
		return n.Node.Handle(now, r)
	}
	done, err := n.settle(context.Background(), r.Session)
	switch {
	case err != nil && done:
		return lootfaults.Recorded, nil
	case errors.Is(err, loot.ErrAlreadySettled):
		return lootfaults.Already, nil
	}
	return lootref.Answer(err)
}

// Recover implements lootfaults.Recoverer: overdue sessions settled through
// settle, then the reference's Recover delivers what is pending.
func (n node) Recover(now time.Time) error {
	ctx := context.Background()
	nos, err := n.cfg.Store.Overdue(ctx, loot.DefaultBatch)
	for _, no := range nos {
		_, e := n.settle(ctx, no)
		err = errors.Join(err, e)
	}
	return errors.Join(err, n.Node.Recover(now))
}

// settle is Service.Settle's steps with rank in place of loot.Decide's
// ranking; done reports whether the result is recorded.
func (n node) settle(ctx context.Context, no string) (done bool, err error) {
	st, lease := n.cfg.Store, loot.DefaultSettleLease
	b := make([]byte, 16)
	_, _ = n.cfg.Tokens.Read(b)
	token, key := hex.EncodeToString(b), loot.LockKey(no)
	ok, err := n.cfg.Lock.Acquire(ctx, key, token, lease)
	if err == nil && !ok {
		return false, loot.ErrAlreadySettling
	}
	defer func() { _, _ = n.cfg.Lock.Release(ctx, key, token) }()
	fz, err := st.BeginSettle(ctx, no, lease)
	if err != nil {
		return false, outcome(err)
	}
	var players []loot.PlayerID
	for _, c := range fz.Claims {
		if c.Intent.Priority() > 0 {
			players = append(players, c.Player)
		}
	}
	fair, err := n.cfg.Fairness.Fairness(ctx, fz.Session.Loot, players)
	if err != nil {
		return false, outcome(err)
	}
	d := decide(fz, fair, lease)
	if _, err := st.RecordGrants(ctx, d); err != nil {
		return false, outcome(err)
	}
	var errs []error
	for _, g := range d.Grants {
		if err := n.cfg.Inventory.Deliver(ctx, g); err != nil {
			errs = append(errs, outcome(err))
			continue
		}
		if _, err := st.MarkDelivered(ctx, g.No); err != nil {
			errs = append(errs, outcome(err))
		}
	}
	return true, errors.Join(errs...)
}

// outcome is err as the Service reports it: a definite refusal as it is,
// anything else an unknown outcome.
func outcome(err error) error {
	for _, d := range []error{loot.ErrNotFound, loot.ErrNotDue, loot.ErrAlreadySettling, loot.ErrAlreadySettled, loot.ErrCanceled, loot.ErrStaleFence, loot.ErrBadArgument} {
		if errors.Is(err, d) {
			return err
		}
	}
	return errors.Join(loot.ErrOutcomeUnknown, err)
}

// decide is loot.Decide with the ranking this row swaps: priority desc,
// wins asc, claim time asc, ties in the order the claims were read.
func decide(fz loot.Frozen, fair map[loot.PlayerID]loot.Fairness, lease time.Duration) loot.Decision {
	sess := fz.Session
	cands := make([]loot.Candidate, len(fz.Claims))
	for i, c := range fz.Claims {
		cands[i] = loot.Candidate{Claim: c, Fairness: fair[c.Player]}
	}
	ranked := slices.Clone(cands)
	ranked = slices.DeleteFunc(ranked, func(c loot.Candidate) bool { return c.Intent.Priority() == 0 })
	slices.SortStableFunc(ranked, func(a, b loot.Candidate) int {
		return cmp.Or(cmp.Compare(b.Intent.Priority(), a.Intent.Priority()), cmp.Compare(a.Fairness.Wins, b.Fairness.Wins), a.At.Compare(b.At))
	})
	var winners []loot.PlayerID
	var grants []loot.Grant
	for _, c := range ranked[:min(len(ranked), sess.Quantity)] {
		winners = append(winners, c.Player)
		grants = append(grants, loot.Grant{No: loot.GrantNo(sess.No, c.Player, sess.Loot), Session: sess.No, Player: c.Player, Loot: sess.Loot,
			Quantity: 1, Rank: len(grants) + 1, Status: loot.GrantPending})
	}
	slices.SortFunc(cands, func(a, b loot.Candidate) int { return cmp.Compare(a.Player, b.Player) })
	snap := loot.Snapshot{Session: sess.No, Dungeon: sess.Dungeon, Loot: sess.Loot, Quantity: sess.Quantity, Deadline: sess.Deadline,
		Rule: sess.Rule, Fence: sess.Fence, Members: slices.Clone(sess.Members), Claims: cands, ClaimsHash: loot.ClaimsHash(cands), Winners: winners}
	return loot.Decision{Session: sess.No, Fence: sess.Fence, Grants: grants, Snapshot: snap, Lease: lease}
}
