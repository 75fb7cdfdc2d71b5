// Package foursig is the row "four-sig" of the design matrix, and the core
// its mutants share: the design source document 001_73391d5f79abbe3d.txt
// chooses in section 5 ("方案：签名加窗口四").
//
// A settlement's signature is (room, round, net amount, final flag),
// recomputed by every node from the settlement alone. Each player's record
// keeps a FIFO of the last 4 signatures processed (2 settlements per match x
// 2 adjacent matches); a signature in the window is a duplicate; when the
// window is full only the oldest is evicted, it is never cleared. The record
// is durable (through env.Durable) and is saved as the document's array
// form, loading the legacy map form too (save.go).
//
// What its rules achieve: the signature carries the room, so a late final
// is credited to its own room (NoCrossRoom holds everywhere); nothing is
// ever held (NoBlocking); the window is 4 per player (BoundedState); the
// window spans two matches, so a retry or copy inside that span is caught
// with no order or counter to agree on; the claim is one atomic durable
// step. It holds clean, duplicate, late, interleave, multi-node and
// sequence-rewind. Under concurrent copies it fails HonestAck: the claim
// and the credit are two steps, so a copy claimed on another node in between
// is acked "duplicate" before the credit lands.
//
// Why it fails (declared in Expected, derived in expect.go): the signature
// is content, not identity. Rounds restart when a player changes rooms, so a
// player returning to a room two matches later replays that room's
// signatures, still in the window, and the return match's settlements are
// dropped uncredited (room-return: NoLoss); a third kind paying what its
// sibling pays is its sibling's signature (third-kind: NoLoss). The window
// is the design's only memory, so a replay older than two matches is
// credited again (deep-replay, window-expiry: NoDup). And there is no Granted
// state, keyed credit or recovery (package playerstate): a crash or failed
// credit after the claim loses the settlement.
//
// The credit is unkeyed: the document keeps no grant key, the window is the
// only memory of what was credited. Keying the credit by the signature
// would let the ledger remember forever what the design forgets after two
// matches, and hide every replay past the window.
package foursig

import "github.com/onceproof/onceproof/faults"

// Variant is a design built on the four-signature core: a row name, a rule
// set, the verdicts it declares and its matrix paragraph. four-sig and each
// mutant package is one Variant value.
type Variant struct {
	Row    string
	Rules  Config
	Expect faults.Expectation
	Text   string
}

var (
	_ faults.Design   = Variant{}
	_ faults.Expecter = Variant{}
)

// Name implements faults.Design.
func (v Variant) Name() string { return v.Row }

// NewCluster implements faults.Design.
func (v Variant) NewCluster() faults.Cluster { return NewCluster(v.Rules) }

// Expected implements faults.Expecter.
func (v Variant) Expected() faults.Expectation { return v.Expect }

// Doc is the design's paragraph in results/matrix.md.
func (v Variant) Doc() string { return v.Text }

// Design is four-sig: the source document's rules.
var Design = Variant{
	Row:    "four-sig",
	Rules:  Default,
	Expect: expectFourSig,
	Text: "Source 001 section 5: signature = (room, round, net, final), a per-player FIFO of 4 kept in the " +
		"player's durable record, evict only the oldest, never clear, unkeyed credit; legacy map saves " +
		"migrate to the array form. Holds late, interleave, duplicate, multi-node and sequence-rewind. " +
		"Claim and credit are two steps, so a concurrent copy is acked duplicate before the credit lands " +
		"(concurrent: HonestAck). And content is not identity: rounds restart when a player changes rooms, so a " +
		"return to a room two matches later carries that room's signatures, still in the window, and is " +
		"dropped uncredited (room-return: NoLoss), as is a third kind paying what its sibling pays. A " +
		"replay older than two matches is credited again (NoDup), and a crash or failed credit after the " +
		"claim loses the settlement.",
}
