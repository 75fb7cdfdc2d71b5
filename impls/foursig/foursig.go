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
// Why it holds where it holds: the signature carries the room, so a late
// final lands in its own room and the new room never sees it (late,
// interleave); the window spans two matches, so a retry or duplicate inside
// that span is caught, with no order or counter to agree on
// (sequence-rewind, multi-node, concurrent: the claim is one atomic durable
// step).
//
// Why it fails where it fails (declared in Expected, derived in expect.go):
// the window is the design's only memory, so a replay older than two
// matches is credited again (deep-replay, window-expiry: NoDup); there is no
// Granted state, keyed credit or recovery, so a crash or failed credit after
// the claim loses the settlement and later retries are acked as duplicates
// (crash, store-error, timeout-after-success: NoLoss, HonestAck); and the
// signature is content, not identity: two distinct settlements with equal
// room, round, net and final inside one window are one signature (the
// generators make such collisions on purpose), and the second is dropped
// (NoLoss).
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
		"player's durable record, evict only the oldest, never clear; legacy map saves migrate to the " +
		"array form. Holds for late and interleaved settlements (the room is in the signature, the " +
		"window spans two matches). Fails where its only memory ends: a replay older than two matches " +
		"is credited again; with no Granted state or keyed credit a crash or failed credit after the " +
		"claim loses the settlement; and content is not identity, so two distinct settlements with one " +
		"signature inside the window lose the second.",
}
