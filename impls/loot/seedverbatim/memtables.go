package seedverbatim

import (
	"cmp"
	"errors"
	"slices"
	"sync"
	"time"

	lootfaults "github.com/onceproof/onceproof/faults/loot"
	"github.com/onceproof/onceproof/ref/loot/mysql/docsql"
)

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

// memTables is the document's database in memory: one mutex, one
// statement at a time, NOW() the database's clock.
type memTables struct {
	mu       sync.Mutex
	now      func() time.Time
	sessions map[string]*session
	intents  map[string][]intent // per session, in row (insertion) order
	grants   map[string]*grant   // by grant_no
	order    []string            // grant_no in insertion order
}

var _ Tables = (*memTables)(nil)

func newMemTables(now func() time.Time) *memTables {
	return &memTables{now: now, sessions: map[string]*session{}, intents: map[string][]intent{}, grants: map[string]*grant{}}
}

// datetime is t as a DATETIME column keeps it: whole seconds.
func datetime(t time.Time) time.Time { return t.Truncate(time.Second) }

// errDuplicate is MySQL's duplicate key error on uk_session_no: the
// document's createSession is a plain INSERT.
var errDuplicate = errors.New("Duplicate entry for key 'uk_session_no'")

func (m *memTables) CreateSession(no, loot string, total int, deadline time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.sessions[no]; ok {
		return errDuplicate
	}
	m.sessions[no] = &session{loot: loot, total: total, status: "CLAIMING", deadline: datetime(deadline)}
	return nil
}

func (m *memTables) CheckIntent(no string, now time.Time) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.sessions[no]
	return s != nil && s.status == "CLAIMING" && now.Before(s.deadline), nil
}

func (m *memTables) UpsertIntent(in docsql.Intent) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	rows := m.intents[in.SessionNo]
	for i := range rows {
		if rows[i].player == in.PlayerID { // ON DUPLICATE KEY UPDATE: created_at kept
			rows[i].kind, rows[i].priority, rows[i].fairScore = in.IntentType, in.Priority, int64(in.FairScore)
			return nil
		}
	}
	m.intents[in.SessionNo] = append(rows, intent{in.PlayerID, in.IntentType, in.Priority, int64(in.FairScore), datetime(in.CreatedAt)})
	return nil
}

func (m *memTables) LockForSettle(no string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.sessions[no]
	if s != nil && s.status == "CLAIMING" && !s.deadline.After(datetime(m.now())) {
		s.status, s.version = "SETTLING", s.version+1
		return true, nil
	}
	return false, nil
}

func (m *memTables) SelectRanked(no string) (string, int, []int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var rs []intent
	for _, r := range m.intents[no] {
		if r.kind != "PASS" {
			rs = append(rs, r)
		}
	}
	// ORDER BY priority DESC, fair_score ASC, created_at ASC: ties stay
	// in row order.
	slices.SortStableFunc(rs, func(a, b intent) int {
		return cmp.Or(cmp.Compare(b.priority, a.priority), cmp.Compare(a.fairScore, b.fairScore), a.createdAt.Compare(b.createdAt))
	})
	var ranked []int64
	for _, r := range rs {
		ranked = append(ranked, r.player)
	}
	s := m.sessions[no]
	return s.loot, s.total, ranked, nil
}

func (m *memTables) InsertGrantIgnore(grantNo, no string, player int64, loot string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.grants[grantNo] == nil {
		m.grants[grantNo] = &grant{session: no, player: player, loot: loot, status: "PENDING"}
		m.order = append(m.order, grantNo)
	}
	return nil
}

func (m *memTables) MarkClosed(no string, allocated int) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if s := m.sessions[no]; s.status == "SETTLING" {
		s.status, s.alloc, s.version = "CLOSED", allocated, s.version+1
	}
	return nil
}

func (m *memTables) Cancel(no string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if s := m.sessions[no]; s != nil && (s.status == "OPEN" || s.status == "CLAIMING" || s.status == "SETTLING") {
		s.status = "CANCELED"
		return true, nil
	}
	return false, nil
}

func (m *memTables) SelectPending() ([]Pending, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var ps []Pending
	for _, no := range m.order {
		if g := m.grants[no]; g.status == "PENDING" {
			ps = append(ps, Pending{GrantNo: no, Session: g.session, Loot: g.loot, Player: g.player})
		}
	}
	return ps, nil
}

func (m *memTables) MarkSuccess(grantNo string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.grants[grantNo].status = "SUCCESS"
	return nil
}

// Read is the document's rows as the world reads them; it keeps no audit
// snapshot.
func (m *memTables) Read(no string) lootfaults.Record {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.sessions[no]
	if s == nil {
		return lootfaults.Record{}
	}
	rec := lootfaults.Record{Status: lootfaults.Status(s.status)}
	for _, r := range m.intents[no] {
		rec.Claims = append(rec.Claims, lootfaults.Claim{Player: lootfaults.PlayerID(r.player), Intent: lootfaults.Intent(r.kind), At: r.createdAt, Fair: r.fairScore})
	}
	slices.SortFunc(rec.Claims, func(a, b lootfaults.Claim) int { return cmp.Compare(a.Player, b.Player) })
	for _, gno := range m.order {
		if g := m.grants[gno]; g.session == no {
			rec.Granted = append(rec.Granted, lootfaults.PlayerID(g.player))
		}
	}
	return rec
}
