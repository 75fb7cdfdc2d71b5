package foursig

import (
	"fmt"

	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/impls/playerstate"
)

// Config is the rule set of a four-signature design. Config{} with its
// defaults filled by the source document's values is four-sig; every mutant
// changes exactly one field.
type Config struct {
	// Capacity is the FIFO's size: 2 settlements per match x 2 adjacent
	// matches = 4 ("窗口等于每局两笔乘以相邻两局，等于四，最小安全值").
	// Redo the derivation (TestCapacityDerivation) when the business adds a
	// kind: it becomes 2 x kinds.
	Capacity int
	// ClearOnFull forgets the whole window when it is full instead of
	// evicting the oldest signature (the mutant four-sig-clear-on-full).
	ClearOnFull bool
	// Fields are the signature's fields (AllFields; the mutants -no-room,
	// -no-net, -no-final drop one).
	Fields Fields
	// CreditCurrentRoom credits the room the player is in now instead of
	// the settlement's room (the mutant credit-current-room). "Now" is the
	// room of the player's latest instant settlement: an instant settles as
	// the player leaves a match, so it is the latest room the server saw the
	// player play in; a final or later kind arriving after the player moved
	// on lands there.
	CreditCurrentRoom bool
}

// Capacity is the source document's window size: 2 settlements per match
// (instant + final) x 2 adjacent matches. TestCapacityDerivation confirms
// 2 x kinds is the smallest safe size when a match's settlements arrive
// before the next match's first one (late), and finds that an old match's
// final interleaved after the new match's instant needs 3 x kinds - 1 (5
// here): with copies arriving throughout the next match, 4 is one short.
// Do not change it without redoing that test; a third kind makes it 6
// (late) or 8 (interleave).
const Capacity = 4

// Default is the source document's rule set: the design four-sig.
var Default = Config{Capacity: Capacity, Fields: AllFields}

// Validate reports a config that cannot run.
func (c Config) Validate() error {
	if c.Capacity < 1 {
		return fmt.Errorf("foursig: capacity must be >= 1, got %d", c.Capacity)
	}
	if c.Fields&^AllFields != 0 || c.Fields == 0 {
		return fmt.Errorf("foursig: fields %#x: want a non-empty subset of AllFields", c.Fields)
	}
	return nil
}

// NewCluster returns fresh durable state for a design with rules c. It
// panics on an invalid config (a programming error in a design package).
func NewCluster(c Config) *playerstate.Cluster[Record] {
	if err := c.Validate(); err != nil {
		panic(err)
	}
	return playerstate.NewCluster[Record](rule{c})
}

// Record is a player's durable record: the save (the window, in the array
// form of save.go) and, for credit-current-room, the room the player is in
// now.
type Record struct {
	Save    []byte
	Room    uint32
	HasRoom bool
}

// rule is the four-signature decision over a Record.
type rule struct{ cfg Config }

// PerPlayer implements playerstate.Rule: the window's capacity.
func (r rule) PerPlayer() int { return r.cfg.Capacity }

// Decide implements playerstate.Rule: load the player's save, answer
// "processed within the window" or record the signature and save. It returns
// the credit's room: the settlement's own, or (credit-current-room) the
// player's current one. The credit stays unkeyed (playerstate): keying it by
// the signature would let the ledger remember forever what the design
// forgets after two matches, and hide every replay past the window.
func (r rule) Decide(rec *Record, s faults.Settlement) (playerstate.Verdict, error) {
	var w Window
	if rec.Save != nil {
		var err error
		if w, err = Load(rec.Save, r.cfg.Capacity); err != nil {
			return playerstate.Verdict{}, fmt.Errorf("foursig: player %d: %w", s.Player, err)
		}
	}
	g := SignatureOf(s, r.cfg.Fields)
	if w.Contains(g) {
		return playerstate.Verdict{Dup: true, Size: len(w)}, nil
	}
	w = w.Push(g, r.cfg.Capacity, r.cfg.ClearOnFull)
	rec.Save = w.Save()
	room := s.Room
	if r.cfg.CreditCurrentRoom {
		if s.Kind == faults.KindInstant || !rec.HasRoom {
			rec.Room, rec.HasRoom = s.Room, true
		}
		room = rec.Room
	}
	return playerstate.Verdict{Credits: []playerstate.Credit{{S: s, Room: room}}, Size: len(w)}, nil
}
