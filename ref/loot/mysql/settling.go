package mysql

import (
	"slices"
	"sync"

	"github.com/onceproof/onceproof/ref/loot"
)

// settling keeps the sessions this Store's BeginSettle won, as the CAS
// read them back, until a RecordGrants of theirs is answered: a close
// that wins is answered by loot_record_v3 with its won flag alone
// (without the read back, a single-path settle took 0.86x and 0.88x of
// its server CPU in two runs of BenchmarkSettleCost, variant
// record-won-no-readback), and the closed session is then the entry with
// status CLOSED and the decision's allocated quantity. That is the row, exactly: after BeginSettle won
// fence f, the row is written only by another BeginSettle (which moves
// the fence), Cancel (which leaves SETTLING) or a close (which needs
// SETTLING at its fence); a close that matched SETTLING at f therefore
// found the row as the CAS of f left it, and writes only status and
// allocated_quantity. A session number and a fence name one won CAS for
// the life of the database (rows are never deleted, and a fence only
// grows), so an entry is never another session's; a row deleted by hand
// and its number opened again while a Store still holds an entry of the
// old one at the same fence would break that, and is not supported. A
// close whose entry is missing (its BeginSettle ran in another process,
// or the entry was evicted) reads the session after the commit: one round
// trip more, as exact, since CLOSED is final.
//
// The entries live between a settle's two CALLs, so they are about the
// settles in flight, and settlingCap bounds them for the settles that
// never record (a settler that failed between the two): 1024 is 16 times
// the 64 concurrent settlers of the benchmarks, and at ~200 bytes a
// session with a few members, 200 KB at most. When full, an arbitrary
// entry makes room: at worst a close reads its session again.
type settling struct {
	mu sync.Mutex
	m  map[string]loot.Session
}

const settlingCap = 1024

// put keeps sess, the answer of a won BeginSettle, with its own copy of
// the members (the caller owns the Frozen's).
func (c *settling) put(sess loot.Session) {
	sess.Members = slices.Clone(sess.Members)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = make(map[string]loot.Session)
	}
	if _, ok := c.m[sess.No]; !ok && len(c.m) >= settlingCap {
		for no := range c.m {
			delete(c.m, no)
			break
		}
	}
	c.m[sess.No] = sess
}

// closed returns session no as the close of d's fence left it, from its
// entry, which it removes; ok is false when there is none of that fence.
func (c *settling) closed(d loot.Decision) (sess loot.Session, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	sess, ok = c.m[d.Session]
	if !ok || sess.Fence != d.Fence {
		return loot.Session{}, false
	}
	delete(c.m, d.Session)
	sess.Status, sess.Allocated = loot.StatusClosed, len(d.Grants)
	return sess, true
}

// forget removes the entry of session no if its fence is at most fence:
// a close of that fence was answered, won, repeated or refused, and no
// later close of the entry's fence will be (a close that lost to a newer
// fence leaves the newer settle's entry).
func (c *settling) forget(no string, fence loot.Fence) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if sess, ok := c.m[no]; ok && sess.Fence <= fence {
		delete(c.m, no)
	}
}
