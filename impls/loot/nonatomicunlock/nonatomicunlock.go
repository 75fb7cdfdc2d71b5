// Package nonatomicunlock is the loot row "nonatomic-unlock": the
// reference releasing its settle lock as source 004 does, GET then DEL
// (two calls), instead of one compare-and-delete. Its declaration derives
// its verdicts.
package nonatomicunlock

import (
	"context"
	"time"

	"github.com/onceproof/onceproof/engine"
	"github.com/onceproof/onceproof/faults/loot"
	"github.com/onceproof/onceproof/impls/loot/internal/shortcut"
	"github.com/onceproof/onceproof/ref/loot"
)

// Design is the row.
var Design = shortcut.Row{
	Row:  "nonatomic-unlock",
	Wire: func(c *loot.Config, w shortcut.Wiring) { c.Lock = getThenDel{w.Env} },
	Decl: engine.Declaration{
		Doc: "The reference releasing its settle lock as source 004 does: GET the key, and DEL it if it holds our token, two calls instead of one compare-and-delete. A settler that stalls between the two can delete the lock a second settler took after its ttl ended (the runs reach it: foreign-unlock under lock-expiry). It holds everywhere: the lock is an optimisation, and the settle CAS and the fence refuse whatever a third settler let in by that deletion would write. Its defence is redundant behind the CAS: a finding, not a fix.",
	},
}

// getThenDel is source 004's release: read the token, delete if it is
// ours; another settler can take the key between the two.
type getThenDel struct{ env lootfaults.Env }

func (l getThenDel) Acquire(_ context.Context, key, token string, ttl time.Duration) (bool, error) {
	return l.env.SetNX(key, token, ttl)
}

func (l getThenDel) Release(_ context.Context, key, token string) (bool, error) {
	cur, err := l.env.Get(key)
	if err != nil || cur != token {
		return false, err
	}
	return true, l.env.Del(key)
}
