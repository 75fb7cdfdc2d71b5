package faults_test

import (
	"crypto/sha256"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/onceproof/onceproof/engine"
	"github.com/onceproof/onceproof/faults"
	lootfaults "github.com/onceproof/onceproof/faults/loot"
)

var (
	update = flag.Bool("update", false, "rewrite testdata/gen-*.golden from the generators (only for a change meant to change schedules: results/ change with it)")
	show   = flag.String("show", "", "with TestGeneratorsArePinned: log the schedule text of FAMILY:SEED")
)

// generator is one subject's generator as the pin sees it: the families
// it pins and the text of the schedule a family and seed select.
type generator struct {
	families []engine.Family
	seeds    int // seeds 0..seeds-1 of each family
	text     func(f engine.Family, seed uint64) string
}

// joinsOf is every family of fs and every pair of them that checkFamily
// accepts, then the joins of more than two in extra.
func joinsOf(fs []engine.Family, checkFamily func(engine.Family) error, extra ...engine.Family) []engine.Family {
	out := slices.Clone(fs)
	for i, f := range fs {
		for _, g := range fs[i+1:] {
			if j := engine.Join(f, g); checkFamily(j) == nil {
				out = append(out, j)
			}
		}
	}
	return append(out, extra...)
}

var generators = map[string]generator{
	"settle": {
		// The triples join features whose draws interact: late with
		// interleave (return gap 3), with room-return (gap 1), rewind with
		// room-return and a third kind, faults on several nodes.
		families: joinsOf(faults.World.Families, faults.World.CheckFamily,
			engine.Join(faults.Families.Late, faults.Families.Interleave, faults.Families.Duplicate),
			engine.Join(faults.Families.Late, faults.Families.Interleave, faults.Families.RoomReturn),
			engine.Join(faults.Families.SequenceRewind, faults.Families.RoomReturn, faults.Families.ThirdKind),
			engine.Join(faults.Families.Late, faults.Families.Interleave, faults.Families.Crash, faults.Families.MultiNode),
			// in-node runs only when named (not one of World.Families).
			faults.Families.InNode, engine.Join(faults.Families.InNode, faults.Families.Duplicate),
			engine.Join(faults.Families.InNode, faults.Families.ThirdKind),
		),
		// 12 seeds x 137 families and joins is about 1.4 s on an idle
		// core, three quarters of it the 17 with long-history (2,000
		// settlements a schedule).
		seeds: 12,
		text:  func(f engine.Family, seed uint64) string { return faults.World.Format(faults.World.Generate(f, seed)) },
	},
	"loot": {
		families: joinsOf(lootfaults.World.Families, lootfaults.World.CheckFamily),
		// A loot schedule is a few dozen requests: 48 seeds x 110
		// families and joins is about 0.2 s, four times the settlement
		// pin's seeds for a generator with as many branches.
		seeds: 48,
		text: func(f engine.Family, seed uint64) string {
			return lootfaults.World.Format(lootfaults.World.Generate(f, seed))
		},
	},
}

// pinLine is one golden line: the family, then, per seed, the first 8 hex
// digits of the sha256 of the schedule's text (a changed schedule that
// keeps its digest is a 2^-32 accident, and a change to the generator
// changes many).
func pinLine(g generator, f engine.Family) string {
	var b strings.Builder
	b.WriteString(string(f))
	for seed := range uint64(g.seeds) {
		sum := sha256.Sum256([]byte(g.text(f, seed)))
		fmt.Fprintf(&b, " %x", sum[:4])
	}
	return b.String()
}

// TestGeneratorsArePinned: every family and join's schedules, seeds
// 0..seeds-1 of its generator, are the ones the golden files hold, text for text.
// Refactoring a generator must keep the order of its random draws; a
// change meant to change schedules rewrites the files with -update and
// regenerates results/.
func TestGeneratorsArePinned(t *testing.T) {
	for _, name := range []string{"settle", "loot"} {
		gen := generators[name]
		t.Run(name, func(t *testing.T) {
			if fam, seed, ok := strings.Cut(*show, ":"); ok {
				n, err := strconv.ParseUint(seed, 10, 64)
				if err != nil {
					t.Fatalf("-show %q: want FAMILY:SEED", *show)
				}
				if !slices.Contains(gen.families, engine.Family(fam)) {
					t.Skipf("-show %q: not a family or join this pin holds", *show)
				}
				t.Logf("%s %s seed %d:\n%s", name, fam, n, gen.text(engine.Family(fam), n))
				return
			}
			path := filepath.Join("testdata", "gen-"+name+".golden")
			var got strings.Builder
			fmt.Fprintf(&got, "# %s generator: family, then sha256(Format(Generate(family, seed)))[:8 hex] for seeds 0..%d\n", name, gen.seeds-1)
			got.WriteString("# regenerate: go test ./faults -run TestGeneratorsArePinned -update (only when schedules are meant to change)\n")
			for _, f := range gen.families {
				got.WriteString(pinLine(gen, f) + "\n")
			}
			if *update {
				if err := os.MkdirAll("testdata", 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(got.String()), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (create it: go test ./faults -run TestGeneratorsArePinned -update)", err)
			}
			wl, gl := strings.Split(string(want), "\n"), strings.Split(got.String(), "\n")
			for i := range max(len(wl), len(gl)) {
				w, g := strings.Fields(lineAt(wl, i)), strings.Fields(lineAt(gl, i))
				if slices.Equal(w, g) {
					continue
				}
				seed := 0
				for seed < min(len(w), len(g)) && w[seed] == g[seed] {
					seed++
				}
				seed-- // field 0 is the family
				if seed < 0 || len(g) == 0 || !slices.Contains(gen.families, engine.Family(g[0])) {
					t.Fatalf("%s: line %d is %q, the golden file has %q: the pinned families or header changed (go test ./faults -run 'TestGeneratorsArePinned/%s')",
						path, i+1, lineAt(gl, i), lineAt(wl, i), name)
				}
				f := engine.Family(g[0])
				t.Fatalf("%s: family %s seed %d: the generator no longer draws what it drew (digest %s, golden %s).\n"+
					"to see the schedule (run it on the old commit too, and diff): go test ./faults -run 'TestGeneratorsArePinned/%s' -v -show '%s:%d'\n"+
					"its text now:\n%s", path, f, seed, lineAt(g, seed+1), lineAt(w, seed+1), name, f, seed, gen.text(f, uint64(seed)))
			}
		})
	}
}

// lineAt is line i of ls, or "" past its end.
func lineAt(ls []string, i int) string {
	if i < len(ls) {
		return ls[i]
	}
	return ""
}
