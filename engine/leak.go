package engine

import (
	"fmt"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
)

// withLeak is h with an EvLeak event at its end naming the goroutines a
// run left behind (stacks, from leakedStacks); note, if not empty, says
// what keeps them from ending.
func withLeak[S, X any](h History[S, X], stacks []string, note string) History[S, X] {
	at := h.Events[len(h.Events)-1].At
	var b strings.Builder
	fmt.Fprintf(&b, "%d goroutine(s) of the design still running after the run", len(stacks))
	if note != "" {
		b.WriteString(", " + note)
	}
	b.WriteString(" (a goroutine started and never stopped: a cleanup loop, a ticker, a worker; stop it in the Cluster's Close)")
	b.WriteString(stackList(stacks))
	h.Events = append(slices.Clip(h.Events), Event[X]{Seq: len(h.Events), At: at, Kind: EvLeak, Node: -1, Attempt: -1, Msg: -1, Err: b.String()})
	return h
}

// stackList lists stacks one a line, identical ones once with their
// count (a library that starts a goroutine per node leaves one per node
// the run built), in a stable order.
func stackList(stacks []string) string {
	count := map[string]int{}
	var order []string
	for _, s := range stacks {
		if count[s] == 0 {
			order = append(order, s)
		}
		count[s]++
	}
	slices.Sort(order)
	var b strings.Builder
	for _, s := range order {
		fmt.Fprintf(&b, "\n%d x %s", count[s], s)
	}
	return b.String()
}

// designStacks is leakedStacks without the goroutines the engine and the
// testing package run in the bubble (the runner waiting on the design, the
// bubble's root): those whose innermost frame outside the runtime, time and
// sync packages is theirs.
func designStacks(id int64) []string {
	var out []string
	for _, s := range leakedStacks(id) {
		_, frames, _ := strings.Cut(s, "] ")
		own := false
		for f := range strings.SplitSeq(frames, " < ") {
			if strings.HasPrefix(f, "runtime.") || strings.HasPrefix(f, "time.") || strings.HasPrefix(f, "sync.") {
				continue
			}
			// testing's bubble root shows as synctest.testingSynctestTest
			// (a linkname).
			own = strings.HasPrefix(f, "engine.") || strings.HasPrefix(f, "testing.") || strings.HasPrefix(f, "synctest.")
			break
		}
		if !own {
			out = append(out, s)
		}
	}
	return out
}

// leakedStacks returns the stack of every goroutine of bubble id, each in
// a form that does not depend on the process (no goroutine numbers,
// addresses or paths): "[state] pkg.Func (file.go:line) < caller ... <
// created by pkg.Func (file.go:line)".
func leakedStacks(id int64) []string {
	buf := make([]byte, 1<<16)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	mark := fmt.Sprintf(", synctest bubble %d", id)
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		header, body, _ := strings.Cut(g, "\n")
		if i := strings.Index(header, mark); i < 0 || !strings.ContainsAny(header[i+len(mark):i+len(mark)+1], "] ") {
			continue
		}
		out = append(out, normalStack(header, body))
	}
	return out
}

var stackState = regexp.MustCompile(`\[([^,\]]*)`)

// withoutArgs drops the argument list a stack's function line ends with:
// "pkg.(*T).M(0xc000123, {0x1?, 0x2?})" is "pkg.(*T).M".
func withoutArgs(fn string) string {
	if !strings.HasSuffix(fn, ")") {
		return fn
	}
	depth := 0
	for i := len(fn) - 1; i >= 0; i-- {
		switch fn[i] {
		case ')':
			depth++
		case '(':
			depth--
			if depth == 0 {
				return fn[:i]
			}
		}
	}
	return fn
}

// normalStack is one goroutine's stack (a header line, then a function
// line and a file line per frame) on one line, without what changes from
// one process to the next.
func normalStack(header, body string) string {
	state := "?"
	if m := stackState.FindStringSubmatch(header); m != nil {
		state = m[1]
	}
	var frames []string
	lines := strings.Split(strings.TrimSpace(body), "\n")
	for i := 0; i+1 < len(lines); i += 2 {
		fn := strings.TrimSpace(lines[i])
		created := strings.HasPrefix(fn, "created by ")
		if created {
			fn, _, _ = strings.Cut(strings.TrimPrefix(fn, "created by "), " in goroutine")
		}
		fn = withoutArgs(fn)
		fn = fn[strings.LastIndexByte(fn, '/')+1:]
		file := strings.TrimSpace(lines[i+1])
		file, _, _ = strings.Cut(file, " +0x")
		f := fmt.Sprintf("%s (%s)", fn, filepath.Base(file))
		if created {
			f = "created by " + f
		}
		frames = append(frames, f)
	}
	return "[" + state + "] " + strings.Join(frames, " < ")
}
