package foursig

import "github.com/onceproof/onceproof/faults"

// lostAndLied is the verdict of a settlement dropped as a replay it is not:
// never credited (NoLoss), and acked "duplicate" (HonestAck).
var lostAndLied = []faults.Property{faults.NoLoss, faults.HonestAck}

// expectFourSig is four-sig's declared verdicts. It holds clean, duplicate,
// late, interleave, multi-node and sequence-rewind: the signature keeps
// every settlement of two adjacent matches apart there, and the window holds
// them while copies can come. It fails:
//
//   - concurrent: the claim (signature into the window) and the credit are
//     two steps; node B's copy, claimed between node A's claim and A's
//     credit, finds the signature and acks "duplicate" before anything is
//     credited (HonestAck).
//   - room-return: content is not identity. Rounds restart when a player
//     changes rooms, so a player who returns to a room two matches later
//     (A, B, A') plays A' at A's round; A' settlements paying what A's paid
//     have A's signatures, still in the window, and are dropped uncredited
//     (NoLoss, HonestAck).
//   - third-kind: a third settlement with its sibling's final flag and
//     amount is its sibling's signature (NoLoss, HonestAck). The document's
//     signature has no field for the kind.
//   - deep-replay: the replay comes after more than 4 newer signatures of
//     the player pushed it out: credited again (NoDup).
//   - window-expiry: the same for copies 2.5 matches later (NoDup); and the
//     copy, credited again, re-enters the window, where a later return to
//     its room collides with it (NoLoss, HonestAck).
//   - crash, store-error, timeout-after-success: a claim that landed with no
//     credit after it (a crash, a failed credit, a claim that timed out
//     after success) is a signature every retry reads as processed (NoLoss,
//     HonestAck: package playerstate).
var expectFourSig = faults.Expectation{
	faults.DeepReplay:     {faults.NoDup},
	faults.WindowExpiry:   {faults.NoDup, faults.NoLoss, faults.HonestAck},
	faults.Crash:          lostAndLied,
	faults.StoreError:     lostAndLied,
	faults.TimeoutSuccess: lostAndLied,
	faults.ThirdKind:      lostAndLied,
	faults.RoomReturn:     lostAndLied,
	// B claims between A's claim and A's credit: a "duplicate" ack with
	// nothing credited yet.
	faults.Concurrent: {faults.HonestAck},
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

// ExpectEverywhere returns four-sig's verdicts with ps added to every
// family, in report order: the verdicts of a mutant whose broken rule shows
// in every family.
func ExpectEverywhere(ps ...faults.Property) faults.Expectation {
	out := faults.Expectation{}
	for _, f := range faults.Families {
		for _, p := range faults.Properties {
			if slicesContains(ps, p) || slicesContains(expectFourSig[f], p) {
				out[f] = append(out[f], p)
			}
		}
	}
	return out
}

func slicesContains(ps []faults.Property, p faults.Property) bool {
	for _, q := range ps {
		if q == p {
			return true
		}
	}
	return false
}
