package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Every committed HTML report opens offline: nothing in it names another
// host or file to fetch (a script or style source, a font, an image, a
// CSS import or url()). Links to the sibling .md, .sched and .html files
// are plain relative hrefs, which a browser follows only when clicked;
// the one absolute URL is the SVG namespace, an identifier never fetched.
func TestCommittedHTMLReportsNeedNoNetwork(t *testing.T) {
	fetch := regexp.MustCompile(`(?i)\bsrc\s*=|@import|url\(|<link\b|https?://`)
	pages := 0
	for _, dir := range []string{"results", "results/loot"} {
		files, err := filepath.Glob(filepath.Join(moduleRoot, dir, "*.html"))
		if err != nil {
			t.Fatal(err)
		}
		cx, _ := filepath.Glob(filepath.Join(moduleRoot, dir, "counterexamples", "*.html"))
		for _, f := range append(files, cx...) {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			pages++
			text := strings.ReplaceAll(string(b), `xmlns="http://www.w3.org/2000/svg"`, "")
			if m := fetch.FindString(text); m != "" {
				t.Errorf("%s names something to fetch (%q): the page must open offline; fix html.go and regenerate (make proofs)", f, m)
			}
		}
	}
	// Two matrices, and a page per counterexample beside its .md.
	if pages < 2 {
		t.Errorf("%d committed HTML reports under results/: make proofs writes matrix.html and one per counterexample (run it)", pages)
	}
}
