// Package creditcurrentroom is the row "credit-current-room": four-sig
// (source document 001_73391d5f79abbe3d.txt) that credits the room the
// player is in now instead of the settlement's own room, breaking section
// 3's "签名自带房间身份，旧账记在旧房名下" ("the signature carries the room:
// the old entry is recorded under the old room"). Its declaration derives
// where it differs from four-sig.
package creditcurrentroom

import (
	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/impls/foursig"
)

// crossRoom is the property every added verdict fails.
var crossRoom = []faults.Property{faults.NoCrossRoom}

// Design is four-sig crediting the player's current room.
var Design = foursig.Variant{
	Row:   "credit-current-room",
	Rules: foursig.Config{Capacity: foursig.Capacity, Fields: foursig.AllFields, CreditCurrentRoom: true},
	Decl: foursig.Mutant("four-sig crediting the room the player is in now, the room of their latest instant "+
		"settlement, instead of the settlement's own room (section 3: \"the old entry is recorded under the old "+
		"room\"; crediting the current room mixes the rooms' accounts and pollutes reconciliation, and a debit "+
		"credited there takes the new room's funds, which the document calls more dangerous than a double credit). "+
		"Its verdicts are four-sig's plus NoCrossRoom wherever a settlement can arrive when the player's latest "+
		"instant is in another room. It adds none where each final arrives after its own instant and before the "+
		"next match's (clean, duplicate, sequence-rewind), or under third-kind, whose third settlement arrives after "+
		"its instant.",
		[]faults.Expect{
			{Families: []faults.Family{faults.Late, faults.Interleave}, Props: crossRoom,
				Why: "an old match's final that arrives after the player's next match started (late), or after the new " +
					"match's instant (interleave), is credited to the new room (NoCrossRoom)"},
			{Families: []faults.Family{faults.MultiNode, faults.Crash, faults.StoreError}, Props: crossRoom,
				Why: "an instant whose claim failed, or never ran (a crash before it), is retried after its own match's " +
					"final arrived, and that final was credited to the room of the player's previous instant (NoCrossRoom)"},
			{Families: []faults.Family{faults.SmallScope}, Props: crossRoom,
				Why: "a final of the player's next match, in another room, that arrives without its match's instant " +
					"is credited to the room of the player's latest instant (NoCrossRoom)"},
			{Families: []faults.Family{faults.TimeoutSuccess}, Props: crossRoom,
				Why: "a credit that timed out is retried by the slow sender a minute later, when the player plays in " +
					"another room, and credited to that room (NoCrossRoom)"},
			{Families: []faults.Family{faults.DeepReplay, faults.WindowExpiry, faults.LongHistory}, Props: crossRoom,
				Why: "an old instant replayed past the window is credited again and moves the player back to its old " +
					"room, where the player's current settlements are then credited; an old final replayed past the " +
					"window is credited to the current room (NoCrossRoom)"},
			{Families: []faults.Family{faults.RoomReturn}, Props: crossRoom,
				Why: "the return match's instant, dropped as its earlier visit's signature, does not move the player's " +
					"room, so the return match's final is credited to the room the player came from (NoCrossRoom)"},
		}),
}
