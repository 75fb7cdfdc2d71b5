// Package browser loads a page the module writes (an HTML report, an SVG
// chart) in Debian's headless chromium, offline, and checks what came
// back: the DOM after the page's scripts ran, the console, and a
// screenshot that is not blank.
package browser

import (
	"bytes"
	"context"
	"fmt"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/onceproof/onceproof/internal/testkit/testserver"
)

// Find is Debian's chromium, or a skip (a failure under
// ONCEPROOF_REQUIRE_SERVICES=1, where CI installs it).
func Find(t testing.TB) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	msg := "chromium is not installed (apt-get install chromium): pages are not checked in a browser"
	if os.Getenv(testserver.RequireEnv) == "1" {
		t.Fatal(msg + " (" + testserver.RequireEnv + "=1)")
	}
	t.Skip(msg)
	return ""
}

// Load opens file in chrome with no network (every host name resolves to
// nothing) in a window of w x h, and returns the DOM after its scripts ran
// and chrome's log; the screenshot goes to shot.
func Load(t testing.TB, chrome, file, shot string, w, h int) (dom, logs string) {
	t.Helper()
	// 60 s: a launch takes 1 to 3 s on an idle machine and was seen to take
	// 25 s on a shared one with a load of 24.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	abs, err := filepath.Abs(file)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, chrome, "--headless", "--disable-gpu", "--no-sandbox",
		"--host-resolver-rules=MAP * ~NOTFOUND", "--no-first-run", "--disable-extensions",
		"--user-data-dir="+filepath.Join(t.TempDir(), "profile"),
		fmt.Sprintf("--window-size=%d,%d", w, h), "--virtual-time-budget=1000",
		"--enable-logging=stderr", "--v=0", "--screenshot="+shot, "--dump-dom", "file://"+abs)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\n%s", cmd, err, stderr.String())
	}
	return stdout.String(), stderr.String()
}

var console = regexp.MustCompile(`(?m)^.*:CONSOLE[:(].*$`)

// ConsoleMessages are the lines of chrome's log that a page's console
// wrote (a script's error included).
func ConsoleMessages(logs string) string { return strings.Join(console.FindAllString(logs, -1), "\n") }

// CheckShot fails unless shot is a PNG of w x h with at least minColours
// colours among every 7th pixel each way (a blank or half-rendered page
// has one or two); repro is the command that reproduces a failure.
func CheckShot(t testing.TB, shot, repro string, w, h, minColours int) {
	t.Helper()
	f, err := os.Open(shot)
	if err != nil {
		t.Errorf("no screenshot: %v; %s", err, repro)
		return
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Errorf("%s is not a PNG: %v; %s", shot, err, repro)
		return
	}
	b := img.Bounds()
	if b.Dx() != w || b.Dy() != h {
		t.Errorf("%s is %dx%d, want %dx%d; %s", shot, b.Dx(), b.Dy(), w, h, repro)
	}
	colours := map[[4]uint32]bool{}
	// Every 7th pixel each way: enough to meet every colour of a legend
	// and of marks at least 8 pixels wide, 1/49 of the work.
	for y := b.Min.Y; y < b.Max.Y; y += 7 {
		for x := b.Min.X; x < b.Max.X; x += 7 {
			r, g, bl, a := img.At(x, y).RGBA()
			colours[[4]uint32{r, g, bl, a}] = true
		}
	}
	if len(colours) < minColours {
		t.Errorf("%s has %d colours, want at least %d: a blank page; %s", shot, len(colours), minColours, repro)
	}
}
