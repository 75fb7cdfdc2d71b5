package props

import (
	"flag"
	"os"
	"testing"

	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/faults/faultstest"
)

func TestMain(m *testing.M) {
	flag.Parse()
	// The .sched files are this package's persistence; rapid's own fail
	// files would only pile up under testdata/rapid.
	if err := flag.Set("rapid.nofailfile", "true"); err != nil {
		panic(err)
	}
	os.Exit(m.Run())
}

// The designs of these tests: faultstest's, under the names and
// declarations the tests expect.
var (
	keyed = faultstest.As("test-keyed", faultstest.Keyed{}, faults.Declaration{
		Doc: "Credits under a grant key; holds everywhere."})
	// memo credits unkeyed and remembers in memory: a crash (or another
	// node) makes it credit twice. It declares only the crash.
	memo = faultstest.As("test-memo", faultstest.Memo{}, faults.Declaration{Fails: []faults.Expect{{
		Families: []faults.Family{faults.Families.Crash}, Props: []faults.Property{faults.Properties.NoDup},
		Why: "a crash after the unkeyed credit forgets it, and the retry credits again"}}})
	neverAcks = faultstest.As("test-never-acks", faultstest.NeverAcks{}, faults.Declaration{})
)
