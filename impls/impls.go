// Package impls registers every design of the matrix, in row order: the
// reference and the designs of source document 000, then the alternatives
// and mutants of source document 001. Each design lives in its own package
// below, a family of variants in its design's package (four-sig's mutants
// in foursig/variants.go), and declares itself (faults.Declaration) with
// the derivation of every verdict it expects.
package impls

import (
	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/impls/foursig"
	"github.com/onceproof/onceproof/impls/refdesign"
	"github.com/onceproof/onceproof/impls/ristretto"
	"github.com/onceproof/onceproof/impls/seedverbatim"
	"github.com/onceproof/onceproof/impls/seqlenient"
	"github.com/onceproof/onceproof/impls/seqstrict"
	"github.com/onceproof/onceproof/impls/sharded"
	"github.com/onceproof/onceproof/impls/typeflags"
	"github.com/onceproof/onceproof/impls/windowonly"
)

// All returns every design in matrix row order.
func All() Registry[faults.Design] {
	return Registry[faults.Design]{
		refdesign.Design{},
		seedverbatim.Design{},
		windowonly.Design{},
		seqstrict.Design,
		seqlenient.Design,
		typeflags.Design,
		sharded.Design{},
		ristretto.Design{},
		foursig.Design,
		foursig.Cap3,
		foursig.ClearOnFull,
		foursig.NoRoom,
		foursig.NoNet,
		foursig.NoFinal,
		foursig.CreditCurrentRoom,
	}
}
