// Package foursig is the row "four-sig" of the design matrix, and the core
// its mutants share: the design source document 001_73391d5f79abbe3d.txt
// chooses in section 5, a per-player window of the last 4 content
// signatures (room, round, net, final) kept in the player's record (package
// playerstate) and saved in the document's array form (save.go). Config is
// the rule set a mutant changes one field of; the mutants are the table in
// variants.go, and Mutant derives each one's declaration from four-sig's,
// whose declaration derives where it fails.
package foursig

import "github.com/onceproof/onceproof/faults"

// Variant is a design built on the four-signature core: a row name, a rule
// set and the design's declaration. four-sig and each of its mutants
// (variants.go) is one Variant value.
type Variant struct {
	Row   string
	Rules Config
	Decl  faults.Declaration
}

var _ faults.Declarer = Variant{}

// Name implements faults.Design.
func (v Variant) Name() string { return v.Row }

// NewCluster implements faults.Design.
func (v Variant) NewCluster() faults.Cluster { return NewCluster(v.Rules) }

// Declare implements faults.Declarer.
func (v Variant) Declare() faults.Declaration { return v.Decl }

// Design is four-sig: the source document's rules.
var Design = Variant{Row: "four-sig", Rules: Default, Decl: declaration}
