package faults

import (
	"fmt"
	"slices"
	"strings"
)

// Family is a fault family: a generator preset and a matrix column.
type Family string

// The fault families, in matrix column order.
const (
	Clean          Family = "clean"         // every settlement delivered once, in order
	Duplicate      Family = "duplicate"     // extra copies close together
	Late           Family = "late"          // a settlement arrives after the player's next match started
	DeepReplay     Family = "deep-replay"   // a queue replays settlements several matches old
	Interleave     Family = "interleave"    // the old match's final after the new match's instant
	WindowExpiry   Family = "window-expiry" // retries land just past the window ttl
	Crash          Family = "crash"         // node crashes at every fault point
	StoreError     Family = "store-error"   // durable ops and credits fail transiently
	TimeoutSuccess Family = "timeout-after-success"
	MultiNode      Family = "multi-node"      // retries land on another node
	Concurrent     Family = "concurrent"      // many identical deliveries at once, goroutines interleaved by Switches
	SequenceRewind Family = "sequence-rewind" // the sender's counter restarts
	ThirdKind      Family = "third-kind"      // the business adds a third settlement per match
	// RoomReturn: a player returns to a room within two matches, its round
	// restarting: the (room, round) of the new match equals one still in a
	// four-signature window. Every other family keeps returns MinReturnGap
	// matches apart, so this is the only column where that collision happens.
	RoomReturn Family = "room-return"
)

// Families lists every family in matrix column order.
var Families = []Family{
	Clean, Duplicate, Late, DeepReplay, Interleave, WindowExpiry, Crash,
	StoreError, TimeoutSuccess, MultiNode, Concurrent, SequenceRewind, ThirdKind,
	RoomReturn,
}

// Property names a property props checks. The names live here so designs in
// impls/ (which may not import props) can declare their expected verdicts.
type Property string

const (
	NoDup        Property = "NoDup"
	NoLoss       Property = "NoLoss"
	NoCrossRoom  Property = "NoCrossRoom"
	NoBlocking   Property = "NoBlocking"
	BoundedState Property = "BoundedState"
	HonestAck    Property = "HonestAck"
)

// Properties lists every property in report order.
var Properties = []Property{NoDup, NoLoss, NoCrossRoom, NoBlocking, BoundedState, HonestAck}

// Expectation says which properties a design is expected to fail in each
// family; a family it does not name must hold everything.
type Expectation map[Family][]Property

// Expecter is a Design that declares its expected verdicts. A design without
// it is expected to hold everywhere.
type Expecter interface {
	Expected() Expectation
}

// Join combines families into one generator preset whose schedules have
// every listed family's features at once, e.g. Join(Late, Crash) is
// "late+crash". Gen and Parse accept joined names.
func Join(fs ...Family) Family {
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = string(f)
	}
	return Family(strings.Join(parts, "+"))
}

// Parts splits a joined family into the families it combines ([f] for a
// plain family).
func (f Family) Parts() []Family {
	var out []Family
	for p := range strings.SplitSeq(string(f), "+") {
		out = append(out, Family(p))
	}
	return out
}

// Check reports whether f is a family of Families or a Join of them; the
// error lists the valid names.
func (f Family) Check() error {
	if slices.Contains(Families, f) {
		return nil // the common case, without splitting
	}
	for _, p := range f.Parts() {
		if !slices.Contains(Families, p) {
			names := make([]string, len(Families))
			for i, g := range Families {
				names[i] = string(g)
			}
			return fmt.Errorf("unknown family %q (want one of %s, or several joined with '+')", string(p), strings.Join(names, ", "))
		}
	}
	return nil
}
