package main

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
	"github.com/onceproof/onceproof/impls/seedverbatim"
	"github.com/onceproof/onceproof/impls/seqlenient"
	"github.com/onceproof/onceproof/impls/seqstrict"
	"github.com/onceproof/onceproof/impls/typeflags"
	"github.com/onceproof/onceproof/impls/windowonly"
)

// registry is every design the matrix runs, in row order.
// TODO(integration): replace with impls.All() once impls/impls.go lands.
func registry() []faults.Design {
	return []faults.Design{
		refdesign.Design{}, seedverbatim.Design{}, windowonly.Design{},
		seqstrict.Design{}, seqlenient.Design{}, typeflags.Design{},
		foursig.Design, foursigcap3.Design, foursigclearonfull.Design, foursignoroom.Design,
		foursignonet.Design, foursignofinal.Design, creditcurrentroom.Design,
	}
}
