package foursig

import (
	"slices"

	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/impls/playerstate"
)

// evicted derives NoDup wherever a copy can come after the window forgot it.
const evicted = "the window is the design's only memory: a replay that comes after newer signatures of the player " +
	"pushed its own out of the window is credited again (NoDup)"

// declaration is four-sig's: what it is, and each failure derived.
var declaration = faults.Declaration{
	Doc: "Source 001 section 5, \"the design: signature plus a window of four\": a settlement's signature is (room, " +
		"round, net amount, final flag), recomputed by every node from the settlement alone; the player's durable " +
		"record keeps a FIFO of the last 4 signatures processed (2 settlements per match x 2 adjacent matches), " +
		"saved in the document's array form, legacy map saves migrated; a signature in the window is a duplicate; " +
		"when the window is full only the oldest is evicted, it is never cleared; the credit is unkeyed (the " +
		"document keeps no grant key: the window is the only memory of what was credited). It holds clean, " +
		"duplicate, late, interleave, multi-node and sequence-rewind: the signature keeps every settlement of two " +
		"adjacent matches apart and the window holds them while copies and retries can come, with no order or " +
		"counter to agree on. The signature carries the room, so a late final is credited to its own room " +
		"(NoCrossRoom holds everywhere); nothing is ever held (NoBlocking); the window is 4 per player (BoundedState).",
	Fails: []faults.Expect{
		{Families: []faults.Family{faults.Families.DeepReplay}, Props: []faults.Property{faults.Properties.NoDup}, Why: evicted},
		{Families: []faults.Family{faults.Families.WindowExpiry}, Props: []faults.Property{faults.Properties.NoDup, faults.Properties.NoLoss, faults.Properties.HonestAck},
			Why: evicted + "; and the copy, credited again, re-enters the window, where a later return to its room " +
				"collides with it (NoLoss, HonestAck)"},
		{Families: []faults.Family{faults.Families.Crash, faults.Families.TimeoutSuccess}, Props: []faults.Property{faults.Properties.NoDup, faults.Properties.NoLoss, faults.Properties.HonestAck},
			Why: playerstate.LostAfterClaim + "; and " + playerstate.SlowRetry("four newer signatures of the player have pushed its own out of the window")},
		{Families: []faults.Family{faults.Families.StoreError, faults.Families.SmallScope}, Props: playerstate.Lost,
			Why: playerstate.LostAfterClaim},
		{Families: []faults.Family{faults.Families.LongHistory}, Props: []faults.Property{faults.Properties.NoDup, faults.Properties.NoLoss, faults.Properties.HonestAck},
			Why: evicted + ": replays come from hundreds of matches back; and the copy, credited again, re-enters the " +
				"window, where the player's next return to its room within two matches meets it (NoLoss, HonestAck), " +
				"as under window-expiry"},
		{Families: []faults.Family{faults.Families.Concurrent, faults.Families.InNode}, Props: []faults.Property{faults.Properties.HonestAck},
			Why: playerstate.EarlyAck("the signature in the window")},
		{Families: []faults.Family{faults.Families.Pause}, Props: []faults.Property{faults.Properties.NoDup, faults.Properties.HonestAck},
			Why: evicted + ": the late copy comes 35 s (farPause) after its settlement, after newer signatures of the " +
				"player, as under deep-replay; and " + playerstate.FrozenAck("the signature in the window")},
		{Families: []faults.Family{faults.Families.ThirdKind}, Props: playerstate.Lost,
			Why: "a third settlement with its sibling's final flag and amount is its sibling's signature: the " +
				"document's signature has no field for the kind, and the third is dropped uncredited (NoLoss, HonestAck)"},
		{Families: []faults.Family{faults.Families.RoomReturn}, Props: playerstate.Lost,
			Why: "content is not identity: rounds restart when a player changes rooms, so a player who returns to a room " +
				"two matches later (A, B, A') plays A' at A's round; A' settlements paying what A's paid have A's " +
				"signatures, still in the window, and are dropped uncredited (NoLoss, HonestAck)"},
	},
}

// Mutant returns the declaration of a mutant of four-sig, described by
// doc: four-sig's verdicts and derivations, except that
//
//   - each family of holds holds (four-sig fails it; doc says why the
//     mutant does not);
//   - each Expect of adds adds its Props to four-sig's verdict in its
//     Families, its Why deriving what the mutant adds. A family four-sig
//     holds takes that Why alone; one four-sig fails for its own reason
//     takes it followed by four-sig's derivation; one where four-sig already
//     fails every added property keeps four-sig's verdict and derivation.
//
// Each family is derived once: adds must name disjoint families
// (faults.Declaration.Check reports a family declared twice).
func Mutant(doc string, adds []faults.Expect, holds ...faults.Family) faults.Declaration {
	base := without(declaration.Fails, holds)
	d := faults.Declaration{Doc: doc}
	var changed []faults.Family
	for _, a := range adds {
		var fresh []faults.Family
		for _, f := range a.Families {
			if !slices.ContainsFunc(base, func(e faults.Expect) bool { return slices.Contains(e.Families, f) }) {
				fresh = append(fresh, f)
			}
		}
		if len(fresh) > 0 {
			d.Fails = append(d.Fails, faults.Expect{Families: fresh, Props: union(a.Props), Why: a.Why})
			changed = append(changed, fresh...)
		}
		for _, e := range base {
			var fs []faults.Family
			for _, f := range e.Families {
				if slices.Contains(a.Families, f) {
					fs = append(fs, f)
				}
			}
			ps := union(e.Props, a.Props)
			if len(fs) == 0 || len(ps) == len(e.Props) {
				continue
			}
			d.Fails = append(d.Fails, faults.Expect{Families: fs, Props: ps, Why: a.Why + "; and " + e.Why})
			changed = append(changed, fs...)
		}
	}
	d.Fails = append(d.Fails, without(base, changed)...)
	return d
}

// without returns es with the families fs removed, dropping an Expect left
// with none.
func without(es []faults.Expect, fs []faults.Family) []faults.Expect {
	var out []faults.Expect
	for _, e := range es {
		e.Families = slices.DeleteFunc(slices.Clone(e.Families), func(f faults.Family) bool { return slices.Contains(fs, f) })
		if len(e.Families) > 0 {
			out = append(out, e)
		}
	}
	return out
}

// union returns the properties of any of pss, in report order.
func union(pss ...[]faults.Property) []faults.Property {
	var out []faults.Property
	for _, p := range faults.World.Properties {
		if slices.ContainsFunc(pss, func(ps []faults.Property) bool { return slices.Contains(ps, p) }) {
			out = append(out, p)
		}
	}
	return out
}
