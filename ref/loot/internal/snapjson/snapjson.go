// Package snapjson writes a loot.Snapshot's JSON byte for byte as
// json.Marshal does, without its reflection: a settle's audit row is the
// snapshot's JSON, and encoding/json spent most of a batched settle's
// encoding time on it (every candidate's three times go through
// time.Time's MarshalJSON and then json's compaction of what it returned).
//
// The bytes must be json.Marshal's, not merely equivalent JSON: the audit
// row is what replay parses, and a row written by a store without this
// package (or before it) must read the same. So the fast path takes only
// what it can write exactly, and anything else is json.Marshal's: a
// string with a byte JSON would escape (a control byte, '"', '\\', and the
// HTML characters '<', '>', '&' json.Marshal escapes by default) or any
// byte outside ASCII (invalid UTF-8 becomes U+FFFD, U+2028 and U+2029 are
// escaped), a time whose offset is not zero (json writes its offset, and
// refuses some) or whose year is outside 0-9999 (json refuses it).
//
// Append names loot.Snapshot's fields itself, so a field added to
// Snapshot, Candidate, Claim or Fairness makes it differ from json.Marshal
// (which writes every field, zero or not) and fails
// TestAppendIsJSONMarshal until Append writes it too.
package snapjson

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/onceproof/onceproof/ref/loot"
)

// Append appends s's JSON, json.Marshal(s)'s bytes, to b, and returns
// json.Marshal's error where it has one.
func Append(b []byte, s loot.Snapshot) ([]byte, error) {
	if !plain(s) {
		out, err := json.Marshal(s)
		return append(b, out...), err
	}
	b = append(b, `{"Session":`...)
	b = quoted(b, s.Session)
	b = append(b, `,"Dungeon":`...)
	b = quoted(b, s.Dungeon)
	b = append(b, `,"Loot":`...)
	b = quoted(b, s.Loot)
	b = append(b, `,"Quantity":`...)
	b = strconv.AppendInt(b, int64(s.Quantity), 10)
	b = append(b, `,"Deadline":`...)
	b = stamp(b, s.Deadline)
	b = append(b, `,"Rule":`...)
	b = quoted(b, string(s.Rule))
	b = append(b, `,"Fence":`...)
	b = strconv.AppendInt(b, int64(s.Fence), 10)
	b = append(b, `,"Members":`...)
	b = players(b, s.Members)
	b = append(b, `,"Claims":`...)
	if s.Claims == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, c := range s.Claims {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"Session":`...)
			b = quoted(b, c.Session)
			b = append(b, `,"Player":`...)
			b = strconv.AppendInt(b, int64(c.Player), 10)
			b = append(b, `,"Intent":`...)
			b = quoted(b, string(c.Intent))
			b = append(b, `,"At":`...)
			b = stamp(b, c.At)
			b = append(b, `,"Fairness":{"Wins":`...)
			b = strconv.AppendInt(b, c.Fairness.Wins, 10)
			b = append(b, `,"SeedMilli":`...)
			b = strconv.AppendInt(b, c.Fairness.SeedMilli, 10)
			b = append(b, `,"LastWin":`...)
			b = stamp(b, c.Fairness.LastWin)
			b = append(b, `,"Since":`...)
			b = stamp(b, c.Fairness.Since)
			b = append(b, "}}"...)
		}
		b = append(b, ']')
	}
	b = append(b, `,"ClaimsHash":`...)
	b = quoted(b, s.ClaimsHash)
	b = append(b, `,"Winners":`...)
	b = players(b, s.Winners)
	return append(b, '}'), nil
}

// plain reports whether Append's fast path writes s exactly: every string
// plain (plainString), every time at offset zero in years 0-9999.
func plain(s loot.Snapshot) bool {
	if !plainString(s.Session) || !plainString(s.Dungeon) || !plainString(s.Loot) ||
		!plainString(string(s.Rule)) || !plainString(s.ClaimsHash) || !plainTime(s.Deadline) {
		return false
	}
	for _, c := range s.Claims {
		if !plainString(c.Session) || !plainString(string(c.Intent)) ||
			!plainTime(c.At) || !plainTime(c.Fairness.LastWin) || !plainTime(c.Fairness.Since) {
			return false
		}
	}
	return true
}

// plainString reports whether json.Marshal writes v between quotes as it
// is: printable ASCII but the bytes it escapes.
func plainString(v string) bool {
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case c < 0x20 || c > 0x7e, c == '"', c == '\\', c == '<', c == '>', c == '&':
			return false
		}
	}
	return true
}

// plainTime reports whether stamp writes t as time.Time's MarshalJSON
// does: at offset zero (written Z), in a year MarshalJSON accepts.
func plainTime(t time.Time) bool {
	_, off := t.Zone()
	return off == 0 && t.Year() >= 0 && t.Year() <= 9999
}

func quoted(b []byte, v string) []byte {
	b = append(b, '"')
	b = append(b, v...)
	return append(b, '"')
}

// stamp is time.Time's MarshalJSON for a plainTime: RFC 3339 with the
// nanoseconds' trailing zeros dropped.
func stamp(b []byte, t time.Time) []byte {
	b = append(b, '"')
	b = t.AppendFormat(b, time.RFC3339Nano)
	return append(b, '"')
}

func players(b []byte, ps []loot.PlayerID) []byte {
	if ps == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, p := range ps {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(p), 10)
	}
	return append(b, ']')
}
