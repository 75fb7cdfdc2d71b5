package testkit

import (
	"os/exec"
	"strings"
	"testing"
)

// The runtime helpers and every non-test package import no test kit: the
// kits import ref (to exercise it), so the other direction would tangle
// what ships with what only tests use.
func TestOnlyTestsImportTheTestKits(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "github.com/onceproof/onceproof/...").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 || strings.Contains(fields[0], "/internal/testkit") {
			continue
		}
		for _, imp := range fields[1:] {
			if strings.Contains(imp, "/internal/testkit") {
				t.Errorf("%s (not a test kit) imports %s", fields[0], imp)
			}
		}
	}
}
