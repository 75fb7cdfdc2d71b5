package loot_test

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"time"
)

// docLoot is the source document's allocation logic, statement for
// statement (its LootMapper SQL, LootSettleService.settle, the
// submitIntent it describes, its status table, its Redis lock), on maps
// instead of MySQL and Redis. The departure tests run one schedule against
// it to show what breaks, then the same schedule against the reference.
type docLoot struct {
	dbNow    time.Time // MySQL NOW()
	appNow   time.Time // LocalDateTime.now() on the node serving the request
	redisNow time.Time
	sessions map[string]*docSession
	intents  map[string][]docIntent // rows in insertion order
	grants   map[string]*docGrant   // by grant_no
	redis    map[string]docKey
	applied  map[string]int // the backpack service's ledger, by request key
	holding  map[int64]int  // items in each player's backpack
	retries  int
}

type docGrant struct {
	player int64
	status string
}

type docSession struct {
	status   string
	deadline time.Time // DATETIME: whole seconds
}

type docIntent struct {
	player    int64
	intent    string
	priority  int
	fairScore int
	createdAt time.Time // DATETIME: whole seconds
}

type docKey struct {
	token string
	until time.Time
}

func newDoc(at time.Time) *docLoot {
	return &docLoot{
		dbNow: at, appNow: at, redisNow: at,
		sessions: map[string]*docSession{}, intents: map[string][]docIntent{},
		grants: map[string]*docGrant{}, redis: map[string]docKey{}, applied: map[string]int{}, holding: map[int64]int{},
	}
}

// open creates a CLAIMING session (the document has no member snapshot in
// its schema or code).
func (d *docLoot) open(no string, deadline time.Time) {
	d.sessions[no] = &docSession{status: "CLAIMING", deadline: deadline.Truncate(time.Second)}
}

// settling is the document's state just after a settler's lockForSettle
// on session no, in which player claimed NEED before the deadline.
func settling(no string, player int64) *docLoot {
	d := newDoc(t0)
	d.open(no, t0.Add(claimWindow))
	d.submitIntent(no, player, "NEED", 0)
	d.dbNow = t0.Add(claimWindow)
	d.lockForSettle(no)
	return d
}

// checkIntent is submitIntent's first step: "先校验会话状态和截止时间", by
// the application's clock.
func (d *docLoot) checkIntent(no string) bool {
	s := d.sessions[no]
	return s != nil && s.status == "CLAIMING" && d.appNow.Before(s.deadline)
}

// upsertIntent is LootMapper.upsertIntent: playerId and fairScore as the
// request body gave them; created_at is LocalDateTime.now() in a DATETIME.
func (d *docLoot) upsertIntent(no string, player int64, intent string, fairScore int) {
	prio := map[string]int{"NEED": 10, "GREED": 1}[intent]
	rows := d.intents[no]
	for i := range rows {
		if rows[i].player == player { // ON DUPLICATE KEY UPDATE (created_at kept)
			rows[i].intent, rows[i].priority, rows[i].fairScore = intent, prio, fairScore
			return
		}
	}
	d.intents[no] = append(rows, docIntent{player, intent, prio, fairScore, d.appNow.Truncate(time.Second)})
}

// submitIntent is the controller's path: check, then write.
func (d *docLoot) submitIntent(no string, player int64, intent string, fairScore int) bool {
	if !d.checkIntent(no) {
		return false
	}
	d.upsertIntent(no, player, intent, fairScore)
	return true
}

// lockForSettle is the conditional UPDATE (status CLAIMING, deadline by
// the database's clock).
func (d *docLoot) lockForSettle(no string) bool {
	s := d.sessions[no]
	if s == nil || s.status != "CLAIMING" || s.deadline.After(d.dbNow) {
		return false
	}
	s.status = "SETTLING"
	return true
}

// selectRanked is its ORDER BY priority DESC, fair_score ASC, created_at
// ASC, over rows in the order the database hands them over (rows): ties
// keep that order, which SQL does not fix.
func selectRanked(rows []docIntent) []int64 {
	var rs []docIntent
	for _, r := range rows {
		if r.intent != "PASS" {
			rs = append(rs, r)
		}
	}
	slices.SortStableFunc(rs, func(a, b docIntent) int {
		return cmp.Or(cmp.Compare(b.priority, a.priority), cmp.Compare(a.fairScore, b.fairScore), a.createdAt.Compare(b.createdAt))
	})
	out := make([]int64, len(rs))
	for i, r := range rs {
		out[i] = r.player
	}
	return out
}

// insertGrantIgnore is INSERT ... ON DUPLICATE KEY UPDATE on uk_grant_no.
func (d *docLoot) insertGrantIgnore(grantNo string, player int64) {
	if _, ok := d.grants[grantNo]; !ok {
		d.grants[grantNo] = &docGrant{player, "PENDING"}
	}
}

// deliver is the backpack service: idempotent by the request key it is
// given.
func (d *docLoot) deliver(key string, player int64) {
	if d.applied[key] == 0 {
		d.applied[key] = 1
		d.holding[player]++
	}
}

// markClosed is its UPDATE ... WHERE status = 'SETTLING'.
func (d *docLoot) markClosed(no string) bool {
	s := d.sessions[no]
	if s == nil || s.status != "SETTLING" {
		return false
	}
	s.status = "CLOSED"
	return true
}

// cancel follows its LootSessionStatus table: OPEN, CLAIMING, SETTLING ->
// CANCELED.
func (d *docLoot) cancel(no string) bool {
	s := d.sessions[no]
	if s == nil || (s.status != "OPEN" && s.status != "CLAIMING" && s.status != "SETTLING") {
		return false
	}
	s.status = "CANCELED"
	return true
}

// compensate is its timed job: every PENDING grant is delivered with its
// grant number and marked SUCCESS. Nothing in it looks at the session.
func (d *docLoot) compensate() { d.compensateKeyed(func(no string) string { return no }) }

// compensateWithFreshKeys is the shortcut the document warns against
// (8.1): a new request key per attempt, as a UUID would be.
func (d *docLoot) compensateWithFreshKeys() {
	d.compensateKeyed(func(no string) string {
		d.retries++
		return fmt.Sprintf("retry-%d", d.retries)
	})
}

func (d *docLoot) compensateKeyed(key func(grantNo string) string) {
	for _, no := range slices.Sorted(maps.Keys(d.grants)) {
		if g := d.grants[no]; g.status == "PENDING" {
			d.deliver(key(no), g.player)
			g.status = "SUCCESS"
		}
	}
}

// setIfAbsent is SET key token NX PX ttl.
func (d *docLoot) setIfAbsent(key, token string, ttl time.Duration) bool {
	if k, ok := d.redis[key]; ok && d.redisNow.Before(k.until) {
		return false
	}
	d.redis[key] = docKey{token, d.redisNow.Add(ttl)}
	return true
}

// get is GET key.
func (d *docLoot) get(key string) string {
	if k, ok := d.redis[key]; ok && d.redisNow.Before(k.until) {
		return k.token
	}
	return ""
}

// del is DEL key.
func (d *docLoot) del(key string) { delete(d.redis, key) }
