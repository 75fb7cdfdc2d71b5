package foursig

import "github.com/onceproof/onceproof/faults"

// lostAndLied is the verdict of a settlement dropped as a replay it is not:
// never credited (NoLoss), and acked "duplicate" (HonestAck).
var lostAndLied = []faults.Property{faults.NoLoss, faults.HonestAck}

// expectFourSig is four-sig's declared verdicts. In every family:
//
//   - content is not identity. Rounds start again when a player enters
//     another room, and rooms are re-entered: a player's matches A (room 1,
//     round 1), B (room 2, round 1), A' (room 1, round 1) put A' two matches
//     after A, inside the window, and A' settlements of A's amounts have A's
//     signatures; A' is dropped as a replay of A (NoLoss, HonestAck). The
//     generators make such collisions on purpose (3 rooms, 5 amounts), so
//     every family finds one within its budget; the shrunk counterexample is
//     two settlements of one room and round, equal net and final flag.
//
// And besides:
//
//   - deep-replay, window-expiry: the replay or retry comes after more than
//     Capacity newer signatures of the player pushed it out: NoDup.
//   - crash, store-error, timeout-after-success: a claim that landed with no
//     credit after it (a crash, a failed credit, a claim that timed out
//     after success) is a signature every retry reads as processed (NoLoss,
//     HonestAck: package playerstate); the same properties as above.
var expectFourSig = faults.Expectation{
	faults.Clean:          lostAndLied,
	faults.Duplicate:      lostAndLied,
	faults.Late:           lostAndLied,
	faults.DeepReplay:     {faults.NoDup, faults.NoLoss, faults.HonestAck},
	faults.Interleave:     lostAndLied,
	faults.WindowExpiry:   {faults.NoDup, faults.NoLoss, faults.HonestAck},
	faults.Crash:          lostAndLied,
	faults.StoreError:     lostAndLied,
	faults.TimeoutSuccess: lostAndLied,
	faults.MultiNode:      lostAndLied,
	faults.Concurrent:     lostAndLied,
	faults.SequenceRewind: lostAndLied,
	faults.ThirdKind:      lostAndLied,
}

// Expect returns a copy of four-sig's verdicts with the families in extra
// replaced (an empty list: the family holds): a mutant declares only where it
// differs from the design it mutates.
func Expect(extra faults.Expectation) faults.Expectation {
	out := make(faults.Expectation, len(expectFourSig)+len(extra))
	for f, ps := range expectFourSig {
		out[f] = ps
	}
	for f, ps := range extra {
		out[f] = ps
	}
	return out
}
