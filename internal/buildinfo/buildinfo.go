// Package buildinfo formats what a binary knows of its own build as the
// one line that `onceproof version` and `lootd version` print.
package buildinfo

import (
	"runtime/debug"
	"strings"
)

// Line is name's version line from bi, what debug.ReadBuildInfo returned
// (ok false: the binary carries none, so the line says so rather than
// inventing a version):
//
//	onceproof v1.2.0 go1.26.0 vcs.revision=3f2a… vcs.time=2026-12-01T20:00:00Z vcs.modified=false
//
// The main module's version is the published version for go install
// MODULE@VERSION; for go build in a git clone it is the tag or a
// pseudo-version of the commit (+dirty if modified), and "(devel)" when
// the go command had no VCS information (go run, go test,
// -buildvcs=false, a git worktree, whose .git is a file the go command
// does not look for). The vcs.* settings are present only when the go
// command stamped them and keep its names, so the line reads as `go
// version -m` does. A setting absent is left out, not printed empty.
func Line(name string, bi *debug.BuildInfo, ok bool) string {
	if !ok || bi == nil {
		return name + " (no build information)"
	}
	version := bi.Main.Version
	if version == "" {
		version = "(devel)" // what the go command writes for a build from a checkout
	}
	fields := []string{name, version}
	if bi.GoVersion != "" {
		fields = append(fields, bi.GoVersion)
	}
	for _, key := range []string{"vcs.revision", "vcs.time", "vcs.modified"} {
		for _, s := range bi.Settings {
			if s.Key == key && s.Value != "" {
				fields = append(fields, key+"="+s.Value)
				break
			}
		}
	}
	return strings.Join(fields, " ")
}

// Read is Line for the running binary.
func Read(name string) string {
	bi, ok := debug.ReadBuildInfo()
	return Line(name, bi, ok)
}
