// Package impls registers every design of the matrix, in row order: the
// reference and the two designs that prove the checker has teeth (issue 3),
// then the alternatives and mutants of source document 001 (issue 4). Each
// design lives in its own package below, with its source, its rules and the
// derivation of its expected verdicts in its doc comment.
package impls

import (
	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/impls/creditcurrentroom"
	"github.com/onceproof/onceproof/impls/foursig"
	"github.com/onceproof/onceproof/impls/foursigcap3"
	"github.com/onceproof/onceproof/impls/foursigclearonfull"
	"github.com/onceproof/onceproof/impls/foursignofinal"
	"github.com/onceproof/onceproof/impls/foursignonet"
	"github.com/onceproof/onceproof/impls/foursignoroom"
	"github.com/onceproof/onceproof/impls/refdesign"
	"github.com/onceproof/onceproof/impls/ristretto"
	"github.com/onceproof/onceproof/impls/seedverbatim"
	"github.com/onceproof/onceproof/impls/seqlenient"
	"github.com/onceproof/onceproof/impls/seqstrict"
	"github.com/onceproof/onceproof/impls/sharded"
	"github.com/onceproof/onceproof/impls/typeflags"
	"github.com/onceproof/onceproof/impls/windowonly"
)

// Documented is a design with a paragraph for results/matrix.md. Every
// design in All implements it.
type Documented interface {
	faults.Design
	Doc() string
}

// All returns every design in matrix row order.
func All() []faults.Design {
	return []faults.Design{
		refdesign.Design{},
		seedverbatim.Design{},
		windowonly.Design{},
		seqstrict.Design,
		seqlenient.Design,
		typeflags.Design,
		sharded.Design{},
		ristretto.Design{},
		foursig.Design,
		foursigcap3.Design,
		foursigclearonfull.Design,
		foursignoroom.Design,
		foursignonet.Design,
		foursignofinal.Design,
		creditcurrentroom.Design,
	}
}

// Names returns the row names of All, in order.
func Names() []string {
	ds := All()
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.Name()
	}
	return out
}

// ByName returns the design whose row name is name.
func ByName(name string) (faults.Design, bool) {
	for _, d := range All() {
		if d.Name() == name {
			return d, true
		}
	}
	return nil, false
}
