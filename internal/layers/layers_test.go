package layers

import (
	"encoding/json"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/onceproof/onceproof"

// pkg is what go list says of one package.
type pkg struct {
	ImportPath string
	Deps       []string
}

// violations is every dependency of an internal/ package on a package
// above its layer, as "pkg imports dep (why)", sorted; deps maps each
// package to its dependencies, direct and indirect (go list's Deps).
func violations(deps map[string][]string) []string {
	var out []string
	for p, ds := range deps {
		rel, ok := strings.CutPrefix(p, module+"/internal/")
		if !ok {
			continue
		}
		kit := rel == "testkit" || strings.HasPrefix(rel, "testkit/")
		for _, d := range ds {
			drel, ours := strings.CutPrefix(d, module+"/")
			if !ours {
				continue // the standard library and third-party modules
			}
			inTestkit := drel == "internal/testkit" || strings.HasPrefix(drel, "internal/testkit/")
			inInternal := strings.HasPrefix(drel, "internal/")
			inRef := drel == "ref" || strings.HasPrefix(drel, "ref/")
			switch {
			case !kit && inTestkit:
				out = append(out, p+" imports "+d+" (a runtime helper imports no test kit)")
			case !kit && !inInternal:
				out = append(out, p+" imports "+d+" (a runtime helper sits below ref and everything above it: it imports only internal/)")
			case kit && !inInternal && !inRef:
				out = append(out, p+" imports "+d+" (a test kit sits below the harness, the designs and the commands: it imports only internal/ and ref/)")
			}
		}
	}
	slices.Sort(out)
	return out
}

// TestInternalImportsNoLayerAboveIt lists every package under internal/
// with its dependencies (go list -deps) and fails on each one above its
// layer, naming the import.
func TestInternalImportsNoLayerAboveIt(t *testing.T) {
	out, err := exec.Command("go", "list", "-json=ImportPath,Deps", module+"/internal/...").Output()
	if err != nil {
		t.Fatalf("go list %s/internal/...: %v\nreproduce: go test ./internal/layers -run TestInternalImportsNoLayerAboveIt", module, err)
	}
	deps := map[string][]string{}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for dec.More() {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		deps[p.ImportPath] = p.Deps
	}
	if len(deps) < 5 {
		t.Fatalf("go list found %d packages under internal/, want the helpers and kits: %v", len(deps), deps)
	}
	for _, v := range violations(deps) {
		t.Errorf("%s\nreproduce: go test ./internal/layers -run TestInternalImportsNoLayerAboveIt", v)
	}
}

// The rule catches what it exists for: a runtime helper on the harness
// (internal/refenv on faults, as it was), one on ref, a helper on a test
// kit, and a test kit on the harness; and lets the allowed imports pass.
func TestViolationsNamesEachLayerBreach(t *testing.T) {
	m := func(s string) string { return module + "/" + s }
	got := violations(map[string][]string{
		m("internal/refenv"):              {"context", m("faults"), m("engine"), m("ref")},
		m("internal/coalesce"):            {"sync", m("internal/redact")},
		m("internal/redisstore"):          {m("internal/testkit/testserver")},
		m("internal/testkit/testserver"):  {m("ref"), m("ref/storetest"), m("internal/redact")},
		m("internal/testkit/nodetest"):    {m("props")},
		m("faults"):                       {m("engine")},
		"github.com/other/internal/thing": {m("impls")},
	})
	want := []string{
		m("internal/redisstore") + " imports " + m("internal/testkit/testserver") + " (a runtime helper imports no test kit)",
		m("internal/refenv") + " imports " + m("engine") + " (a runtime helper sits below ref and everything above it: it imports only internal/)",
		m("internal/refenv") + " imports " + m("faults") + " (a runtime helper sits below ref and everything above it: it imports only internal/)",
		m("internal/refenv") + " imports " + m("ref") + " (a runtime helper sits below ref and everything above it: it imports only internal/)",
		m("internal/testkit/nodetest") + " imports " + m("props") + " (a test kit sits below the harness, the designs and the commands: it imports only internal/ and ref/)",
	}
	if !slices.Equal(got, want) {
		t.Errorf("violations =\n%s\nwant\n%s\nreproduce: go test ./internal/layers -run TestViolationsNamesEachLayerBreach", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
