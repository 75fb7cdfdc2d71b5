package foursig

import (
	"slices"

	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/impls/playerstate"
)

// everyFamily is every column of the matrix and in-node, which runs only
// when named: where a mutant's signature collides in every schedule.
var everyFamily = append(slices.Clip(faults.World.Families), faults.Families.InNode)

// The mutants of four-sig (source document 001_73391d5f79abbe3d.txt), one
// Variant each: a rule set that changes one field of Default, and a
// declaration that derives where the mutant differs from four-sig (Mutant).
// impls.All lists them in matrix row order after four-sig.
var (
	// Cap3 is the row "four-sig-cap3": a window of 3 instead of 4,
	// breaking section 5's "设三，第四笔写入恰好挤掉第一笔防护" ("with three,
	// the fourth write evicts exactly the first one's protection").
	Cap3 = Variant{
		Row:   "four-sig-cap3",
		Rules: Config{Capacity: 3, Fields: AllFields},
		Decl: Mutant("four-sig with a window of 3 instead of 4, breaking section 5's \"window = 2 per match x 2 "+
			"adjacent matches = 4, the minimum safe value\". Its verdicts are four-sig's except under duplicate, and "+
			"under room-return, which it holds where four-sig fails: the smaller window has already forgotten the "+
			"returned-to room's signatures when the player comes back two matches later.",
			[]faults.Expect{{Families: []faults.Family{faults.Families.Duplicate}, Props: []faults.Property{faults.Properties.NoDup, faults.Properties.NoLoss, faults.Properties.HonestAck},
				Why: "with two settlements per match, the fourth write (the new match's final) evicts the old match's " +
					"first signature while that match is still within the span a copy can arrive in, and duplicate's " +
					"copies reach into the next-but-one match: the copy is credited again (NoDup); credited again, it " +
					"re-enters the window, where a later return to its room collides with it (NoLoss, HonestAck)"}},
			faults.Families.RoomReturn),
	}

	// ClearOnFull is the row "four-sig-clear-on-full": it empties the
	// window when it is full instead of evicting the oldest signature,
	// breaking section 5's "绝不整体清空，清空即状态遗忘" ("never clear the
	// whole window: clearing is forgetting state").
	ClearOnFull = Variant{
		Row:   "four-sig-clear-on-full",
		Rules: Config{Capacity: Capacity, ClearOnFull: true, Fields: AllFields},
		Decl: Mutant("four-sig that clears the window when it is full instead of evicting the oldest signature, "+
			"breaking section 5's \"never clear the whole window: clearing is forgetting state\" (and section 7: "+
			"\"clearing when full is forgetting state, legal only for a pure cache\"). Its verdicts are four-sig's "+
			"except under duplicate: in the other families four-sig holds, a copy or retry comes soon after its "+
			"original, before a clear can forget it.",
			[]faults.Expect{{Families: []faults.Family{faults.Families.Duplicate}, Props: []faults.Property{faults.Properties.NoDup},
				Why: "right after a clear the window holds one signature, so a copy of any of the three it forgot, all " +
					"of them inside the two-match span, is credited again; duplicate's copies reach into the " +
					"next-but-one match, right after a clear (NoDup)"}}),
	}

	// NoRoom is the row "four-sig-no-room": the signature drops the room,
	// (round, net, final), breaking section 5's "房间防串房" ("the room
	// prevents crediting another room").
	NoRoom = Variant{
		Row:   "four-sig-no-room",
		Rules: Config{Capacity: Capacity, Fields: AllFields &^ FieldRoom},
		Decl: Mutant("four-sig with signature (round, net, final): no room (section 5: \"the room prevents "+
			"crediting another room\"). Where adjacent matches differ in round or "+
			"amount it is four-sig; and the credit still goes to the settlement's own room, so dropping the room from "+
			"the signature loses settlements but never misroutes one.",
			[]faults.Expect{{Families: everyFamily, Props: playerstate.Lost,
				Why: "rounds start again in every room, so the old room's late final and the new room's settlement of " +
					"the same round and amount share a signature, and whichever comes second is dropped as a replay " +
					"although it was never credited (NoLoss), with a false \"duplicate\" ack (HonestAck); in every family " +
					"a player who leaves a room after round 1 plays the next match at round 1 too, and with equal " +
					"amounts the adjacent matches share signatures"}}),
	}

	// NoNet is the row "four-sig-no-net": the signature drops the net
	// amount, (room, round, final), breaking section 5's
	// "净额与终局防同局同轮多笔互串" ("net amount and final flag keep
	// settlements of one match and round apart"). Its declaration is
	// four-sig's; its Doc says why.
	NoNet = Variant{
		Row:   "four-sig-no-net",
		Rules: Config{Capacity: Capacity, Fields: AllFields &^ FieldNet},
		Decl: Mutant("four-sig with signature (room, round, final): no net amount (section 5: \"net amount and "+
			"final flag keep settlements of one match and round apart\"). Two settlements of one match and round with "+
			"the same final flag (the third kind beside the instant or the final, or a re-entered room's round) "+
			"share a signature whatever they pay, and the second is dropped (NoLoss, HonestAck). Its verdicts are "+
			"four-sig's: the only generated collision it adds, a third kind with its sibling's final flag and another "+
			"amount, sits in third-kind, which four-sig already fails (for a third kind paying its sibling's amount). "+
			"The schedule that isolates its rule, where four-sig holds and this mutant fails, is impls' "+
			"TestEachMutantBreaksItsRule.", nil),
	}

	// NoFinal is the row "four-sig-no-final": the signature drops the final
	// flag, (room, round, net), breaking section 5's
	// "净额与终局防同局同轮多笔互串" ("net amount and final flag keep
	// settlements of one match and round apart").
	NoFinal = Variant{
		Row:   "four-sig-no-final",
		Rules: Config{Capacity: Capacity, Fields: AllFields &^ FieldFinal},
		Decl: Mutant("four-sig with signature (room, round, net): no final flag (section 5: \"net amount and "+
			"final flag keep settlements of one match and round apart\"). Where a match's instant and final pay "+
			"different amounts it is four-sig, and each credit goes to the settlement's own room.",
			[]faults.Expect{{Families: everyFamily, Props: playerstate.Lost,
				Why: "a match's instant and final of equal amount share a signature, so the final is dropped as a replay " +
					"of the instant and never credited (NoLoss), with a false \"duplicate\" ack (HonestAck); in every " +
					"family a match's instant and final often pay the same amount"}}),
	}

	// CreditCurrentRoom is the row "credit-current-room": it credits the
	// room the player is in now instead of the settlement's own room,
	// breaking section 3's "签名自带房间身份，旧账记在旧房名下" ("the
	// signature carries the room: the old entry is recorded under the old
	// room").
	CreditCurrentRoom = Variant{
		Row:   "credit-current-room",
		Rules: Config{Capacity: Capacity, Fields: AllFields, CreditCurrentRoom: true},
		Decl: Mutant("four-sig crediting the room the player is in now, the room of their latest instant "+
			"settlement, instead of the settlement's own room (section 3: \"the old entry is recorded under the old "+
			"room\"; crediting the current room mixes the rooms' accounts and pollutes reconciliation, and a debit "+
			"credited there takes the new room's funds, which the document calls more dangerous than a double credit). "+
			"Its verdicts are four-sig's plus NoCrossRoom wherever a settlement can arrive when the player's latest "+
			"instant is in another room. It adds none where each final arrives after its own instant and before the "+
			"next match's (clean, duplicate, sequence-rewind), or under third-kind, whose third settlement arrives after "+
			"its instant.",
			[]faults.Expect{
				{Families: []faults.Family{faults.Families.Late, faults.Families.Interleave}, Props: crossRoom,
					Why: "an old match's final that arrives after the player's next match started (late), or after the new " +
						"match's instant (interleave), is credited to the new room (NoCrossRoom)"},
				{Families: []faults.Family{faults.Families.MultiNode, faults.Families.Crash, faults.Families.StoreError}, Props: crossRoom,
					Why: "an instant whose claim failed, or never ran (a crash before it), is retried after its own match's " +
						"final arrived, and that final was credited to the room of the player's previous instant (NoCrossRoom)"},
				{Families: []faults.Family{faults.Families.SmallScope}, Props: crossRoom,
					Why: "a final of the player's next match, in another room, that arrives without its match's instant " +
						"is credited to the room of the player's latest instant (NoCrossRoom)"},
				{Families: []faults.Family{faults.Families.TimeoutSuccess}, Props: crossRoom,
					Why: "a credit that timed out is retried by the slow sender a minute later, when the player plays in " +
						"another room, and credited to that room (NoCrossRoom)"},
				{Families: []faults.Family{faults.Families.DeepReplay, faults.Families.WindowExpiry, faults.Families.LongHistory}, Props: crossRoom,
					Why: "an old instant replayed past the window is credited again and moves the player back to its old " +
						"room, where the player's current settlements are then credited; an old final replayed past the " +
						"window is credited to the current room (NoCrossRoom)"},
				{Families: []faults.Family{faults.Families.Pause}, Props: crossRoom,
					Why: "a settlement whose call froze is retried, or resumes, after the player's next match's instant, in " +
						"another room, moved the player there; and the late copy of an old instant, 35 s on, is credited " +
						"again and moves the player back to its old room: credited to the room of the player's latest " +
						"instant, not its own (NoCrossRoom)"},
				{Families: []faults.Family{faults.Families.RoomReturn}, Props: crossRoom,
					Why: "the return match's instant, dropped as its earlier visit's signature, does not move the player's " +
						"room, so the return match's final is credited to the room the player came from (NoCrossRoom)"},
			}),
	}
)

// crossRoom is the property every verdict CreditCurrentRoom adds fails.
var crossRoom = []faults.Property{faults.Properties.NoCrossRoom}
