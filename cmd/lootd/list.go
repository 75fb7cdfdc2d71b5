package main

import (
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/onceproof/onceproof/ref/loot"
)

// Page sizes of GET /api/loot/sessions. A row carries its members, up to
// maxMembers (1024) ids of up to 20 bytes of JSON each, about 20 KiB: 100
// rows bound a page near 2 MiB and the rows one store read holds; 20 is a
// screen of an operator's table.
const (
	defaultPage = 20
	maxPage     = 100
)

type listJSON struct {
	Sessions []sessionJSON `json:"sessions"`
	// Next is the cursor of the following page (pass it as ?after=), absent
	// when this page is not full. A full last page has a Next whose page
	// is empty.
	Next string `json:"next,omitempty"`
}

// list is GET /api/loot/sessions: the sessions in the order (deadline,
// sessionNo), filtered by ?status=, ?deadlineFrom= and ?deadlineTo=
// (RFC 3339; [from, to)), ?limit= rows (1..100, default 20) after the
// cursor ?after= (the previous page's next). A store that cannot list is
// 501 not_implemented.
func (s *server) list(w http.ResponseWriter, r *http.Request) {
	lister, ok := s.be.store.(loot.Lister)
	if !ok {
		writeError(w, &apiError{status: http.StatusNotImplemented, Code: "not_implemented", Message: "this store does not list sessions"})
		return
	}
	q, e := listQuery(r)
	if e != nil {
		writeError(w, e)
		return
	}
	ss, err := lister.List(r.Context(), q)
	if err != nil {
		s.fail(w, err, "list failed")
		return
	}
	out := listJSON{Sessions: make([]sessionJSON, len(ss))}
	for i, sess := range ss {
		out.Sessions[i] = toSessionJSON(sess)
	}
	if len(ss) == q.Limit {
		last := ss[len(ss)-1]
		out.Next = cursor(last.Deadline, last.No)
	}
	writeJSON(w, http.StatusOK, out)
}

// listQuery parses list's query string.
func listQuery(r *http.Request) (loot.ListQuery, *apiError) {
	v := r.URL.Query()
	q := loot.ListQuery{Status: loot.Status(v.Get("status")), Limit: defaultPage}
	if q.Status != "" && !q.Status.Valid() {
		return q, badRequest("bad_argument", "status %q: want OPEN, CLAIMING, SETTLING, CLOSED or CANCELED", q.Status)
	}
	for _, t := range []struct {
		name string
		dst  *time.Time
	}{{"deadlineFrom", &q.DeadlineFrom}, {"deadlineTo", &q.DeadlineTo}} {
		if s := v.Get(t.name); s != "" {
			at, err := time.Parse(time.RFC3339Nano, s)
			if err != nil {
				return q, badRequest("bad_argument", "%s %q: want an RFC 3339 time such as 2026-03-01T12:00:00Z", t.name, s)
			}
			*t.dst = at
		}
	}
	if s := v.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > maxPage {
			return q, badRequest("bad_argument", "limit %q: want 1..%d", s, maxPage)
		}
		q.Limit = n
	}
	if s := v.Get("after"); s != "" {
		at, no, ok := parseCursor(s)
		if !ok {
			return q, badRequest("bad_argument", "after %q: want the next of a previous page", s)
		}
		q.AfterDeadline, q.AfterNo = at, no
	}
	return q, nil
}

// cursor is a page's last row as an opaque token: its deadline and number.
// A deadline has no space, so the first space ends it.
func cursor(deadline time.Time, no string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(deadline.UTC().Format(time.RFC3339Nano) + " " + no))
}

func parseCursor(s string) (time.Time, string, bool) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return time.Time{}, "", false
	}
	d, no, ok := strings.Cut(string(b), " ")
	at, err := time.Parse(time.RFC3339Nano, d)
	if !ok || err != nil || loot.CheckSessionNo(no) != nil {
		return time.Time{}, "", false
	}
	return at, no, true
}
