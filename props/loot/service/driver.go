package lootservice

import (
	"bytes"
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	lootfaults "github.com/onceproof/onceproof/faults/loot"
	"github.com/onceproof/onceproof/props/loot/service/inventory"
)

// DriveOptions says how Drive runs a workload.
type DriveOptions struct {
	Targets []Target
	Spec    Spec
	// Client sends the requests (nil: one with a 10 s timeout: longer than
	// any of lootd's store budgets, so a timeout is a lost answer, not a
	// slow one).
	Client *http.Client
	// Now is the harness's clock; Drive reads it only to time what it
	// records and to wait for the planned times.
	Now func() time.Time
	// Drain bounds how long, after the last send, Drive keeps sampling
	// until every session is over (CLOSED with every grant delivered,
	// CANCELED, or never started) (0: 30 s: lootd settles due sessions
	// every second and retries deliveries every 5 s).
	Drain time.Duration
	// Pause is the pause between two sampling rounds of a session (0:
	// 10 ms).
	Pause time.Duration
	// DB, when set, is the service's database, read as an auditor in every
	// round with Queries (Spec.Queries of its driver), each in a read-only
	// transaction.
	DB      *sql.DB
	Queries map[string]string
	// Faults are the run's planned faults, applied through Inject at
	// their times; each start and end is in the record. Drive heals every
	// fault before it drains, so the last rounds read a whole system.
	Faults FaultPlan
	Inject Injectors
	// Upstream, when Targets are proxies in front of the instances
	// (ProxyTargets), are the instances themselves: the record names
	// these, so a replay reaches them through proxies of its own.
	Upstream []Target
	// Inventory is the inventory the harness hosts for the service (nil:
	// Inject.Inventory, if faults reach it): its ledger of the run's
	// sessions goes into the record, and the judge reads deliveries
	// from it.
	Inventory *inventory.Server
	// Align, when set, starts the run on the next multiple of Align of
	// the wall clock (since Go's zero time, so a whole second is one in
	// every zone) instead of at once: a service that stores times
	// truncated to whole seconds then stores the deadlines the schedule
	// means (an open sent at a whole second of the run), not up to a
	// second earlier, and a claim planned just before the deadline
	// reaches it before the service's deadline too.
	Align time.Duration
	_     struct{}
}

// Drive sends w to the targets and samples every session while it runs,
// and returns the record. Each planned send waits for its time, and a
// session's start, claims, settles and cancels also wait for the first
// answer to its open (a claim for its start's): the schedule sends them
// after those, and a request that overtook its open on the wire would be
// refused for a reason the schedule does not have. An attempt answered
// unknown (or not at all) is sent again after the schedule's retry delay
// to the next target, up to its MaxAttempts, and then given up. Drive
// returns an error only when it cannot run at all; a run whose answers
// were all errors is a record the judge reads.
func Drive(ctx context.Context, w Workload, family string, seed uint64, o DriveOptions) (Record, error) {
	if len(o.Targets) == 0 {
		return Record{}, fmt.Errorf("no targets")
	}
	if o.Client == nil {
		o.Client = &http.Client{Timeout: 10 * time.Second}
	}
	if o.Drain == 0 {
		o.Drain = 30 * time.Second
	}
	if o.Pause == 0 {
		o.Pause = 10 * time.Millisecond
	}
	start := o.Now()
	if o.Align > 0 {
		// Every wait is for an offset from start, so a start in the
		// future holds every send, sample and fault until it.
		start = start.Truncate(o.Align).Add(o.Align)
	}
	d := &driver{w: w, o: o, start: start, tokens: map[int64]string{}}
	named := o.Targets
	if len(o.Upstream) == len(o.Targets) {
		named = o.Upstream
	}
	d.rec.Run = header(w, family, seed, named, o.Spec, d.start)
	d.rec.Run.Faults, d.rec.Run.Align = o.Faults, o.Align
	d.gates = make([]gate, len(w.Schedule.Sessions))
	for x := range d.gates {
		d.gates[x] = gate{opened: make(chan struct{}), started: make(chan struct{})}
	}
	sctx, stopSampling := context.WithCancel(ctx)
	var samplers sync.WaitGroup
	d.over = make([]bool, len(w.Schedule.Sessions))
	for x := range w.Schedule.Sessions {
		samplers.Add(1)
		go func() { defer samplers.Done(); d.sample(sctx, x) }()
	}
	var senders sync.WaitGroup
	for _, s := range w.Sends {
		senders.Add(1)
		go func() { defer senders.Done(); d.send(ctx, s) }()
	}
	for i, f := range o.Faults.Faults {
		senders.Add(1)
		go func() { defer senders.Done(); d.fault(ctx, i, f) }()
	}
	senders.Wait()
	d.drain(ctx)
	stopSampling()
	samplers.Wait()
	if inv := cmp.Or(o.Inventory, o.Inject.Inventory); inv != nil {
		d.rec.Run.Inventory, d.rec.Ledger = true, ledgerOf(inv, w)
	}
	d.rec.End = d.since()
	slices.SortStableFunc(d.rec.Exchanges, func(a, b Exchange) int { return int(a.Done - b.Done) })
	slices.SortStableFunc(d.rec.Samples, func(a, b Sample) int { return int(a.Done - b.Done) })
	slices.SortStableFunc(d.rec.Faults, func(a, b AppliedFault) int { return int(a.At - b.At) })
	return d.rec, ctx.Err()
}

type driver struct {
	w     Workload
	o     DriveOptions
	start time.Time
	gates []gate

	mu       sync.Mutex
	rec      Record
	attempts int
	tokens   map[int64]string
	over     []bool // per session: the last round showed it over
}

// gate is a session's order: its open and start answered (closed once).
type gate struct {
	opened, started     chan struct{}
	openOnce, startOnce sync.Once
}

func (d *driver) since() time.Duration { return d.o.Now().Sub(d.start) }

// sleepUntil waits until offset at of the run, or ctx's end.
func (d *driver) sleepUntil(ctx context.Context, at time.Duration) {
	if wait := at - d.since(); wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
		}
	}
}

// send runs one planned delivery: its attempts until one is answered.
func (d *driver) send(ctx context.Context, s Send) {
	d.sleepUntil(ctx, s.At)
	r := d.w.Schedule.Requests[s.Request]
	if r.Session >= 0 {
		g := &d.gates[r.Session]
		switch r.Kind {
		case lootfaults.Kinds.OpenSession:
			defer g.openOnce.Do(func() { close(g.opened) })
		case lootfaults.Kinds.StartClaims:
			defer g.startOnce.Do(func() { close(g.started) })
			d.await(ctx, g.opened)
		case lootfaults.Kinds.ClaimItem:
			d.await(ctx, g.started)
		default:
			d.await(ctx, g.opened)
		}
	}
	if !d.o.Spec.Has(opOf(r.Kind)) {
		return // the service has no such endpoint (a start where sessions open claiming)
	}
	op := d.o.Spec.Ops[opOf(r.Kind)]
	vars := d.w.vars(r)
	retry := d.w.wall(d.w.Schedule.RetryAfter)
	var last Exchange
	for k := range max(d.w.Schedule.MaxAttempts, 1) {
		if ctx.Err() != nil {
			return
		}
		if k > 0 {
			d.sleepUntil(ctx, d.since()+retry)
		}
		target := (s.Target + k) % len(d.o.Targets)
		ex := d.do(ctx, target, op, vars, int64(r.Player))
		ex.Request, ex.Target = s.Request, target
		ex.Outcome, ex.Unmapped = d.o.Spec.classify(opOf(r.Kind), ex.Status, ex.Answer)
		d.mu.Lock()
		ex.Attempt = d.attempts
		d.attempts++
		d.rec.Exchanges = append(d.rec.Exchanges, ex)
		d.mu.Unlock()
		if ex.Outcome != Unknown {
			return
		}
		last = ex
	}
	why := last.Err
	if why == "" {
		why = fmt.Sprintf("the last answer was %d %s", last.Status, strings.TrimSpace(last.Answer))
	}
	d.mu.Lock()
	d.rec.GiveUps = append(d.rec.GiveUps, GiveUp{Request: s.Request, At: d.since(), Err: why})
	d.mu.Unlock()
}

// fault applies planned fault i at its time and ends it For later (at
// once if ctx ends first: a fault must not outlive its run), recording
// both steps.
func (d *driver) fault(ctx context.Context, i int, f Fault) {
	d.sleepUntil(ctx, f.At)
	step := func(name string, do func() (string, error)) {
		res, err := do()
		a := AppliedFault{At: d.since(), Fault: i, Target: f.Target, Kind: f.Kind, Step: name, Result: res}
		if err != nil {
			a.Err = err.Error()
		}
		d.mu.Lock()
		d.rec.Faults = append(d.rec.Faults, a)
		d.mu.Unlock()
	}
	step("start", func() (string, error) { return d.o.Inject.start(i, f) })
	d.sleepUntil(ctx, f.At+f.For)
	step("end", func() (string, error) { return d.o.Inject.end(context.WithoutCancel(ctx), i, f) })
}

// await waits for ch, but no longer than the drain: a gate whose request
// was never answered must not hold the rest of the run forever.
func (d *driver) await(ctx context.Context, ch <-chan struct{}) {
	t := time.NewTimer(d.o.Drain)
	defer t.Stop()
	select {
	case <-ch:
	case <-t.C:
	case <-ctx.Done():
	}
}

// do sends one attempt of op with vars to target, as player p (for the
// player listener), and returns what came back (Request, Target, Attempt
// and Outcome are the caller's).
func (d *driver) do(ctx context.Context, target int, op Operation, vars map[string]string, p int64) Exchange {
	base := d.o.Targets[target].Internal
	if op.Listener == "player" {
		base = d.o.Targets[target].Player
	}
	ex := Exchange{Method: op.Method, URL: strings.TrimRight(base, "/") + fill(op.Path, vars), Body: fill(op.Body, vars)}
	var body io.Reader
	if ex.Body != "" {
		body = strings.NewReader(ex.Body)
	}
	ex.Sent = d.since()
	req, err := http.NewRequestWithContext(ctx, op.Method, ex.URL, body)
	if err == nil && ex.Body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if err == nil && op.Listener == "player" {
		err = d.authenticate(ctx, req, p)
	}
	if err != nil {
		ex.Done, ex.Err = d.since(), err.Error()
		return ex
	}
	resp, err := d.o.Client.Do(req)
	if err != nil {
		ex.Done, ex.Err = d.since(), err.Error()
		return ex
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	ex.Done, ex.Status, ex.Answer = d.since(), resp.StatusCode, string(b)
	if err != nil {
		// The status came, the body did not all: the answer is not known.
		ex.Status, ex.Err = 0, "reading the answer: "+err.Error()
	}
	return ex
}

// authenticate names player p on req as the spec says.
func (d *driver) authenticate(ctx context.Context, req *http.Request, p int64) error {
	vars := map[string]string{"player": strconv.FormatInt(p, 10)}
	a := d.o.Spec.Auth
	if a.Kind == "header" {
		req.Header.Set(a.Header, fill(a.Template, vars))
		return nil
	}
	d.mu.Lock()
	tok, ok := d.tokens[p]
	d.mu.Unlock()
	if !ok {
		args := make([]string, len(a.Command))
		for i, w := range a.Command {
			args[i] = fill(w, vars)
		}
		out, err := exec.CommandContext(ctx, args[0], args[1:]...).Output()
		if err != nil {
			return fmt.Errorf("minting player %d's token (%s): %v", p, args[0], err)
		}
		tok = strings.TrimSpace(string(out))
		d.mu.Lock()
		d.tokens[p] = tok
		d.mu.Unlock()
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	return nil
}

// sample reads session x in rounds, from its first open's time until ctx
// ends: the session, each of its claiming players' own view (their
// claim), and, once CLOSED, its audit; a read the service lacks is left
// out, and the session itself is then read from the database.
func (d *driver) sample(ctx context.Context, x int) {
	first := time.Duration(-1)
	for _, s := range d.w.Sends {
		if r := d.w.Schedule.Requests[s.Request]; r.Session == x && r.Kind == lootfaults.Kinds.OpenSession {
			first = s.At
			break
		}
	}
	if first >= 0 {
		d.sleepUntil(ctx, first)
	}
	players := d.w.Players(x)
	vars := map[string]string{"session": d.w.SessionNo(x)}
	for round := 0; ctx.Err() == nil; round++ {
		var status string
		var over bool
		switch {
		case d.o.Spec.Has("session"):
			status, over = d.read(ctx, x, round, "session", 0, vars)
		case d.o.DB != nil:
			status, over = d.sqlSession(ctx, x, round, vars["session"])
		}
		if status != "" && d.o.Spec.Has("mine") {
			for _, p := range players {
				v := map[string]string{"session": vars["session"], "player": strconv.FormatInt(int64(p), 10)}
				d.read(ctx, x, round, "mine", int64(p), v)
			}
		}
		if status == string(lootfaults.Statuses.Closed) && d.o.Spec.Has("audit") {
			d.read(ctx, x, round, "audit", 0, vars)
		}
		if status != "" && d.o.DB != nil {
			for _, name := range SQLNames {
				if d.o.Queries[name] == "" || (!d.o.Spec.Has("session") && (name == "session" || name == "grants")) {
					continue // not given, or read already by sqlSession
				}
				d.query(ctx, x, round, name, vars["session"])
			}
		}
		d.mu.Lock()
		d.over[x] = over
		d.mu.Unlock()
		d.sleepUntil(ctx, d.since()+d.o.Pause)
	}
}

// read reads op of session x and records it; for a session read it
// returns the status and whether the session is over (nothing more will
// change: CLOSED with every grant delivered, CANCELED, or absent or OPEN,
// which the drain takes for never started).
func (d *driver) read(ctx context.Context, x, round int, op string, p int64, vars map[string]string) (string, bool) {
	ex := d.do(ctx, 0, d.o.Spec.Ops[op], vars, p)
	if ctx.Err() != nil {
		return "", false // cut by the end of sampling: not a read
	}
	d.mu.Lock()
	d.rec.Samples = append(d.rec.Samples, Sample{Session: x, Op: op, Player: p, Round: round, Sent: ex.Sent, Done: ex.Done, Status: ex.Status, Answer: ex.Answer, Err: ex.Err})
	d.mu.Unlock()
	if op != "session" || ex.Status != http.StatusOK {
		return "", ex.Status == http.StatusNotFound
	}
	v := decodeJSON(ex.Answer)
	status, _ := str(lookup(v, d.o.Spec.Fields["session.status"]))
	switch lootfaults.Status(status) {
	case lootfaults.Statuses.Canceled, lootfaults.Statuses.Open:
		return status, true
	case lootfaults.Statuses.Closed:
		gs, _ := lookup(v, d.o.Spec.Fields["session.grants"]).([]any)
		for _, g := range gs {
			if st, _ := str(lookup(g, d.o.Spec.Fields["grant.status"])); st != d.o.Spec.Fields["grant.delivered"] {
				return status, false
			}
		}
		return status, true
	}
	return status, false
}

// sqlSession reads session x's row and grants from the database, for a
// service with no session read, and returns what read returns: the status
// ("" when a query failed) and whether the session is over (no row, OPEN,
// CANCELED, or CLOSED with every grant delivered).
func (d *driver) sqlSession(ctx context.Context, x, round int, no string) (string, bool) {
	row := d.query(ctx, x, round, "session", no)
	grants := d.query(ctx, x, round, "grants", no)
	if row == nil || grants == nil {
		return "", false
	}
	if len(row) == 0 {
		return string(lootfaults.Statuses.None), true
	}
	status, _ := str(row[0][0])
	switch lootfaults.Status(status) {
	case lootfaults.Statuses.Canceled, lootfaults.Statuses.Open:
		return status, true
	case lootfaults.Statuses.Closed:
		for _, g := range grants {
			if len(g) < 3 {
				return status, false
			}
			if st, _ := str(g[2]); st != d.o.Spec.Fields["grant.delivered"] {
				return status, false
			}
		}
		return status, true
	}
	return status, false
}

// query runs the auditor's query name for session no and records its rows
// as a JSON array of arrays (Status 200), or its error (Status 0); it
// returns the rows (nil when the query failed).
func (d *driver) query(ctx context.Context, x, round int, name, no string) [][]any {
	s := Sample{Session: x, Op: "sql-" + name, Round: round, Sent: d.since()}
	rows, err := d.queryRows(ctx, d.o.Queries[name], no)
	s.Done = d.since()
	if ctx.Err() != nil {
		return nil // cut by the end of sampling: not a read
	}
	if rows == nil {
		rows = [][]any{} // no rows read is an answer, not a failure
	}
	if err != nil {
		s.Err, rows = err.Error(), nil
	} else if b, err := json.Marshal(rows); err != nil {
		s.Err, rows = err.Error(), nil
	} else {
		s.Status, s.Answer = http.StatusOK, string(b)
	}
	d.mu.Lock()
	d.rec.Samples = append(d.rec.Samples, s)
	d.mu.Unlock()
	return rows
}

// queryRows runs q with arg in a read-only transaction: every column as a
// JSON value (bytes as text).
func (d *driver) queryRows(ctx context.Context, q, arg string) (out [][]any, err error) {
	tx, err := d.o.DB.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, tx.Rollback()) }()
	rows, err := tx.QueryContext(ctx, q, arg)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		for i, v := range vals {
			if b, ok := v.([]byte); ok {
				vals[i] = string(b)
			}
		}
		out = append(out, vals)
	}
	return out, rows.Err()
}

// drain waits, up to Drain, until every session's last round showed it
// over, and then for one more round of each (so the last round is read
// after the last change).
func (d *driver) drain(ctx context.Context) {
	until := d.since() + d.o.Drain
	for d.since() < until && ctx.Err() == nil {
		d.mu.Lock()
		done := !slices.Contains(d.over, false)
		d.mu.Unlock()
		if done {
			break
		}
		d.sleepUntil(ctx, d.since()+10*d.o.Pause)
	}
	d.sleepUntil(ctx, d.since()+d.roundTime())
}

// roundTime bounds one sampling round from above: the longest a round of
// reads took so far, twice, plus the pause.
func (d *driver) roundTime() time.Duration {
	d.mu.Lock()
	defer d.mu.Unlock()
	var longest time.Duration
	start := map[[2]int]time.Duration{}
	for _, s := range d.rec.Samples {
		k := [2]int{s.Session, s.Round}
		if _, ok := start[k]; !ok {
			start[k] = s.Sent
		}
		longest = max(longest, s.Done-start[k])
	}
	return 2*longest + 2*d.o.Pause
}

// classify maps an answer of op to its outcome by the spec's rules (false:
// no rule matched, the outcome is unknown).
func (s Spec) classify(op string, status int, body string) (Outcome, bool) {
	if status == 0 {
		return Unknown, false
	}
	var v any
	for _, r := range s.Answers {
		if (r.Op != op && r.Op != "*") || !slices.Contains(r.Statuses, status) {
			continue
		}
		if r.Field != "" {
			if v == nil {
				v = decodeJSON(body)
			}
			if got, ok := str(lookup(v, r.Field)); !ok || got != r.Value {
				continue
			}
		}
		return r.Outcome, false
	}
	return Unknown, true
}

// decodeJSON is body as a JSON value (nil if it is not JSON).
func decodeJSON(body string) any {
	var v any
	dec := json.NewDecoder(bytes.NewReader([]byte(body)))
	dec.UseNumber()
	if dec.Decode(&v) != nil {
		return nil
	}
	return v
}

// lookup follows a dotted path of object keys into v (nil: not there).
func lookup(v any, path string) any {
	for _, k := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// str is a JSON scalar as text (false for null, objects and arrays).
func str(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case json.Number:
		return x.String(), true
	case bool:
		return strconv.FormatBool(x), true
	}
	return "", false
}
