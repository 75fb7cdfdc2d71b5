package buildinfo

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

func TestLineNamesVersionGoAndEveryVCSStamp(t *testing.T) {
	stamped := &debug.BuildInfo{
		GoVersion: "go1.26.0",
		Main:      debug.Module{Path: "github.com/onceproof/onceproof", Version: "v1.2.0"},
		Settings: []debug.BuildSetting{
			{Key: "-trimpath", Value: "true"}, // not a vcs stamp: left out
			{Key: "vcs.modified", Value: "true"},
			{Key: "vcs.time", Value: "2026-12-01T20:00:00Z"},
			{Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"},
			{Key: "vcs", Value: "git"},
		},
	}
	for _, c := range []struct {
		name string
		bi   *debug.BuildInfo
		ok   bool
		want string
	}{
		{"stamped", stamped, true,
			"onceproof v1.2.0 go1.26.0 vcs.revision=0123456789abcdef0123456789abcdef01234567 vcs.time=2026-12-01T20:00:00Z vcs.modified=true"},
		{"a checkout built without stamps", &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "(devel)"}}, true,
			"onceproof (devel) go1.26.0"},
		{"no main version", &debug.BuildInfo{GoVersion: "go1.26.0"}, true, "onceproof (devel) go1.26.0"},
		{"no build information", nil, false, "onceproof (no build information)"},
	} {
		if got := Line("onceproof", c.bi, c.ok); got != c.want {
			t.Errorf("%s: Line(%+v, %v) =\n\t%q, want\n\t%q", c.name, c.bi, c.ok, got, c.want)
		}
	}
}

// The test binary has build information but no vcs stamps (the go command
// stamps only what it builds as a program): Read is one line with the Go
// version it was built with.
func TestReadIsOneLineWithTheRunningGoVersion(t *testing.T) {
	got := Read("lootd")
	if strings.ContainsAny(got, "\n\r") || !strings.HasPrefix(got, "lootd ") || !strings.Contains(got, runtime.Version()) {
		t.Errorf("Read(%q) = %q, want one line starting %q containing %q", "lootd", got, "lootd ", runtime.Version())
	}
}

// Each binary's -version line says what `go version -m` reads from the
// same binary: the module version, the Go version, and each vcs.* stamp
// the go command wrote. It builds with -buildvcs=auto (GOFLAGS may say
// false) so that a build in a git clone is stamped; a git worktree is not
// (the go command looks for a .git directory, and a worktree has a .git
// file), and then the line must carry no stamp either.
func TestBuiltBinariesVersionAgreesWithGoVersionM(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		goTool = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	for _, name := range []string{"onceproof", "lootd"} {
		bin := filepath.Join(t.TempDir(), name)
		pkg := "../../cmd/" + name
		if out, err := exec.Command(goTool, "build", "-buildvcs=auto", "-o", bin, pkg).CombinedOutput(); err != nil {
			t.Fatalf("go build -buildvcs=auto -o %s %s: %v\n%s", bin, pkg, err, out)
		}
		m, err := exec.Command(goTool, "version", "-m", bin).Output()
		if err != nil {
			t.Fatalf("go version -m %s: %v", bin, err)
		}
		want := fromGoVersionM(name, string(m))
		for _, arg := range []string{"version", "-version"} {
			out, err := exec.Command(bin, arg).Output()
			if err != nil || string(out) != want+"\n" {
				t.Errorf("%s %s: %v, stdout %q; want exit 0 and %q (from go version -m %s:\n%s)", bin, arg, err, out, want, bin, m)
			}
		}
	}
}

// fromGoVersionM is the line Line should make, read from `go version -m`
// output: "BIN: goVERSION", then tab-indented "mod PATH VERSION [SUM]" and
// "build KEY=VALUE" lines.
func fromGoVersionM(name, m string) string {
	lines := strings.Split(strings.TrimSpace(m), "\n")
	_, goVersion, _ := strings.Cut(lines[0], ": ")
	var version string
	stamps := map[string]string{}
	for _, l := range lines[1:] {
		f := strings.Split(strings.TrimSpace(l), "\t")
		switch {
		case len(f) >= 3 && f[0] == "mod":
			version = f[2]
		case len(f) == 2 && f[0] == "build":
			if k, v, ok := strings.Cut(f[1], "="); ok {
				stamps[k] = v
			}
		}
	}
	want := name + " " + version + " " + goVersion
	for _, k := range []string{"vcs.revision", "vcs.time", "vcs.modified"} {
		if v, ok := stamps[k]; ok {
			want += " " + k + "=" + v
		}
	}
	return want
}
