// Package redact masks the secrets a database or Redis address carries (the
// password of user:password@, and password=, sslpassword=, token= ...
// parameters) in whatever the commands print: the address itself, and the
// messages of the parsers and drivers that quote it. cmd/lootd and
// cmd/onceproof print an address, or an error that may hold one, only
// through Scrub (or Addr, or Error, which call it); Scrub says what it
// masks and what it cannot.
package redact

import (
	"errors"
	"io"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Mask stands for every secret removed.
const Mask = "xxxxx"

// minGlobal is the shortest secret masked wherever it appears in a message,
// not only inside its address's own text. A shorter one would mask
// unrelated words (a password "db" in "database"), and is guessable
// anyway: 95 printable bytes to the power 3 is under a million tries.
const minGlobal = 4

// Addr is addr with its secrets masked, for printing the address itself.
func Addr(addr string) string { return Scrub(addr, addr) }

// Error is err with its message scrubbed of addrs' secrets (see Scrub);
// errors.Is and errors.As still see err's chain, whose own messages are
// not scrubbed: print the returned error, not what it unwraps to. A nil
// err stays nil.
func Error(err error, addrs ...string) error {
	if err == nil {
		return nil
	}
	return &scrubbed{err: err, msg: Scrub(err.Error(), addrs...)}
}

// Writer is w with every Write scrubbed of addrs' secrets (see Scrub), for
// a command's stderr: a message that quotes an argument (a flag's refused
// value, a stray argument) then cannot show a password given by a slip. It
// scrubs each Write alone: write whole messages.
func Writer(w io.Writer, addrs ...string) io.Writer { return &writer{w: w, addrs: addrs} }

type writer struct {
	w     io.Writer
	addrs []string
}

// Write reports len(p) written when the scrubbed text was, which may be
// shorter or longer than p.
func (sw *writer) Write(p []byte) (int, error) {
	if _, err := io.WriteString(sw.w, Scrub(string(p), sw.addrs...)); err != nil {
		return 0, err
	}
	return len(p), nil
}

type scrubbed struct {
	err error
	msg string
}

func (e *scrubbed) Error() string { return e.msg }
func (e *scrubbed) Unwrap() error { return e.err }

// Scrub is msg with every secret of addrs masked wherever msg quotes it,
// and then anything that looks like a secret in any address form masked:
//
//  1. each address, as msg renders it (verbatim or %q-escaped), becomes
//     itself with its secrets masked, so the host and database stay
//     readable;
//  2. each secret of minGlobal bytes or more is masked wherever it is
//     left (a driver that took the address apart and printed a piece),
//     verbatim, %q-escaped, percent-decoded or re-encoded;
//  3. each double-quoted fragment of a secret is masked (url.Parse's
//     `invalid URL escape "%zz"` and `invalid port ":pa" after host` quote
//     the bytes of the password they choke on), and each double-quoted
//     start of an address masked as in step 1 (url.Parse quotes the
//     address up to a '#', which may be inside the password);
//  4. the forms: scheme://user:SECRET@, user:SECRET@tcp(, and
//     password=SECRET (also sslpassword, passwd, pass, pwd, secret, token,
//     sslkey; any case; 'quoted' values too).
//
// So the secrets of the addresses it is given are masked however a message
// renders them (a secret shorter than minGlobal only inside its address or
// a quoted fragment); where an address is ambiguous it masks more than the
// secret, never less. An address it is not given is masked by its form
// alone (step 4), which a password holding a space or a quote escapes:
// pass every address you hold.
func Scrub(msg string, addrs ...string) string {
	var (
		parsed  []address
		secrets []string
	)
	for _, a := range addrs {
		if a == "" {
			continue
		}
		p := parse(a)
		for _, r := range renderings(a, p.masked(len(a))) {
			msg = strings.ReplaceAll(msg, r[0], r[1])
		}
		parsed = append(parsed, p)
		secrets = append(secrets, p.secrets()...)
	}
	var global []string
	for _, s := range secrets {
		for _, r := range forms(s) {
			if len(r) >= minGlobal {
				global = append(global, r)
			}
		}
	}
	// Longest first: a secret that holds another is masked whole.
	slices.SortFunc(global, func(a, b string) int { return len(b) - len(a) })
	for _, s := range global {
		msg = strings.ReplaceAll(msg, s, Mask)
	}
	msg = maskQuotedFragments(msg, parsed, secrets)
	msg = maskGroup(urlPassword, msg)
	msg = maskGroup(dsnPassword, msg)
	return secretParam.ReplaceAllStringFunc(msg, maskParam)
}

// placeholders are the passwords the commands' own help and usage errors
// print (user:pass@host): what they stand for is no secret, and masking
// them would garble the forms a usage error lists. Step 4 leaves them; an
// address given to Scrub is masked whatever its password.
var placeholders = []string{"pass", "password", Mask}

// maskGroup masks re's last group in each of its matches in msg, unless
// that is a placeholder.
func maskGroup(re *regexp.Regexp, msg string) string {
	var b strings.Builder
	last := 0
	for _, m := range re.FindAllStringSubmatchIndex(msg, -1) {
		from, to := m[len(m)-2], m[len(m)-1]
		if from == to || slices.Contains(placeholders, msg[from:to]) {
			continue
		}
		b.WriteString(msg[last:from])
		b.WriteString(Mask)
		last = to
	}
	b.WriteString(msg[last:])
	return b.String()
}

// maskParam masks the value of one secretParam match, less the punctuation
// a message puts after a word (a value at the end of "...?password=x: dial
// error" keeps its colon): at most those few bytes of a password that
// ends in them are shown.
func maskParam(m string) string {
	key, value, _ := strings.Cut(m, "=")
	if strings.HasPrefix(value, "'") {
		return key + "=" + Mask
	}
	kept := strings.TrimRight(value, ":,;.)")
	return key + "=" + Mask + value[len(kept):]
}

// The forms step 4 masks in any message. urlPassword stops at / ? # (a
// URL's authority ends there) and at white space and quotes (a message's
// words and quoting): a password holding one is masked by steps 1-3 only.
var (
	urlPassword = regexp.MustCompile("[A-Za-z][A-Za-z0-9+.-]*://[^\\s/?#@:\"'`]*:([^\\s/?#\"'`]*)@")
	dsnPassword = regexp.MustCompile("(?:^|[\\s\"'`(=,;])[^\\s:@/\"'`(]*:([^\\s\"'`]*)@\\w*\\(")
	secretParam = regexp.MustCompile("(?i)\\b(?:" + secretKeys + ")=(?:'(?:[^'\\\\]|\\\\.)*'|[^&\\s\"'`]*)")
)

// secretKeys are the parameter names whose value is a secret (or, sslkey,
// the path of one), in pgx's and libpq's key=value and URL query forms.
const secretKeys = `(?:ssl)?password|passwd|pass|pwd|secret|token|sslkey`

// paramKey finds a parameter inside one address, after the start, '?',
// '&' or white space (key=value form); isSecretKey says whether its key,
// percent-decoded as pgx decodes a query's keys (pass%77ord is password),
// names a secret, at any case.
var (
	paramKey    = regexp.MustCompile(`(?:^|[?&\s;])([^=&?#\s;]+)=`)
	isSecretKey = regexp.MustCompile(`(?i)^(?:` + secretKeys + `)$`)
)

// address is one address and where its secrets are.
type address struct {
	addr  string
	spans []span // in order, disjoint
}

// span is addr[from:to].
type span struct{ from, to int }

func (a address) secrets() []string {
	var out []string
	for _, s := range a.spans {
		out = append(out, a.addr[s.from:s.to])
	}
	return out
}

// masked is addr's first n bytes with each secret (or the part of it
// among them) replaced by Mask.
func (a address) masked(n int) string {
	var b strings.Builder
	last := 0
	for _, s := range a.spans {
		if s.from >= n {
			break
		}
		b.WriteString(a.addr[last:s.from])
		b.WriteString(Mask)
		last = min(s.to, n)
	}
	b.WriteString(a.addr[last:n])
	return b.String()
}

// parse finds addr's secrets: the password of its user info and the value
// of each secret parameter.
//
// The user info's password is the text between the first ':' after the
// scheme's "//" and the last '@' of the address; in go-sql-driver's
// user:pass@tcp(host)/db (no "//") between the first ':' and the last '@'
// before the last '/', as the driver reads it. The last '@' rather than
// url.Parse's reading (the authority ends at the first / ? #) because a
// password holding one of those is what makes url.Parse fail, or read a
// host that is not there; an '@' in a query is then masked with the rest.
func parse(addr string) address {
	var spans []span
	if i := strings.Index(addr, "://"); i >= 0 {
		from := i + len("://")
		if at := strings.LastIndexByte(addr[from:], '@'); at >= 0 {
			if c := strings.IndexByte(addr[from:from+at], ':'); c >= 0 {
				spans = append(spans, span{from + c + 1, from + at})
			}
		}
	} else if at := dsnAt(addr); at >= 0 {
		if c := strings.IndexByte(addr[:at], ':'); c >= 0 {
			spans = append(spans, span{c + 1, at})
		}
	}
	// key=value (no "://", no "?"): a value ends at white space; in a URL
	// or a DSN's query, at the next & or #.
	kv := !strings.Contains(addr, "://") && !strings.Contains(addr, "?")
	for _, m := range paramKey.FindAllStringSubmatchIndex(addr, -1) {
		key := addr[m[2]:m[3]]
		if k, err := url.QueryUnescape(key); err == nil {
			key = k
		}
		if !isSecretKey.MatchString(key) {
			continue
		}
		from, to := m[1], m[1]
		switch {
		case to < len(addr) && addr[to] == '\'':
			to++
			for to < len(addr) && addr[to] != '\'' {
				if addr[to] == '\\' {
					to++
				}
				to++
			}
			to = min(to+1, len(addr))
		case kv:
			for to < len(addr) && !strings.ContainsRune(" \t\r\n", rune(addr[to])) {
				to++
			}
		default:
			for to < len(addr) && addr[to] != '&' && addr[to] != '#' {
				to++
			}
		}
		spans = append(spans, span{from, to})
	}
	slices.SortFunc(spans, func(a, b span) int { return a.from - b.from })
	a := address{addr: addr}
	for _, s := range spans {
		if n := len(a.spans); n > 0 && s.from <= a.spans[n-1].to {
			a.spans[n-1].to = max(a.spans[n-1].to, s.to) // overlapping: one secret
			continue
		}
		if s.to > s.from {
			a.spans = append(a.spans, s)
		}
	}
	return a
}

// dsnAt is the '@' that ends the user info of go-sql-driver DSN addr, -1
// if none: the last one before a net(address) part, which a password
// cannot fake without an '@' of its own there; else the driver's own
// reading, the last '@' before the last '/' (a password holding a '/' in a
// DSN with no /db moves that '/' into the password, and the driver then
// quotes the password's end as the database's name).
func dsnAt(addr string) int {
	if ms := netPart.FindAllStringIndex(addr, -1); len(ms) > 0 {
		return ms[len(ms)-1][0]
	}
	end := len(addr)
	if sl := strings.LastIndexByte(addr, '/'); sl >= 0 {
		end = sl
	}
	return strings.LastIndexByte(addr[:end], '@')
}

// netPart is a DSN's "@tcp(", "@unix(" or "@(".
var netPart = regexp.MustCompile(`@\w*\(`)

// renderings pairs each way a message may quote addr with the same
// rendering of red.
func renderings(addr, red string) [][2]string {
	return [][2]string{
		{quoted(addr), quoted(red)}, // %q: before the verbatim form, which it may contain
		{addr, red},
	}
}

// forms is each way a message may carry secret s: verbatim, %q-escaped,
// percent-decoded (what a URL's password means) and re-encoded (how
// url.URL.String writes it back).
func forms(s string) []string {
	out := []string{s, quoted(s)}
	for _, unescape := range []func(string) (string, error){url.PathUnescape, url.QueryUnescape, unquoteSingle} {
		if d, err := unescape(s); err == nil && d != s {
			out = append(out, d, quoted(d))
		}
	}
	if u := url.UserPassword("", s).String(); len(u) > 1 {
		out = append(out, u[1:]) // ":" + the escaped password
	}
	return out
}

// quoted is s as %q renders it, without the quotes.
func quoted(s string) string {
	q := strconv.Quote(s)
	return q[1 : len(q)-1]
}

// unquoteSingle is a libpq 'quoted' value's text.
func unquoteSingle(s string) (string, error) {
	if len(s) < 2 || s[0] != '\'' || s[len(s)-1] != '\'' {
		return "", errors.New("not quoted")
	}
	var b strings.Builder
	for i := 1; i < len(s)-1; i++ {
		if s[i] == '\\' && i+1 < len(s)-1 {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String(), nil
}

// quotedFragment is a %q-quoted word of a message.
var quotedFragment = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)

// maskQuotedFragments masks each double-quoted fragment of msg that is the
// start of one of addrs (as step 1 does), or whose text (less the ':' or
// '@' url.Parse quotes with it) lies inside one of secrets or shares
// minGlobal bytes in a row with one (go-sql-driver's `invalid dbname
// "END-OF-PASSWORD@tcp(host)"`).
func maskQuotedFragments(msg string, addrs []address, secrets []string) string {
	if len(secrets) == 0 {
		return msg
	}
	return quotedFragment.ReplaceAllStringFunc(msg, func(q string) string {
		text, err := strconv.Unquote(q)
		if err != nil {
			return q
		}
		for _, a := range addrs {
			if text != "" && strings.HasPrefix(a.addr, text) {
				return strconv.Quote(a.masked(len(text)))
			}
		}
		text = strings.Trim(text, ":@")
		if text == "" || text == Mask {
			return q
		}
		for _, s := range secrets {
			for _, f := range forms(s) {
				if strings.Contains(f, text) || sharesRun(text, f, minGlobal) {
					return `"` + Mask + `"`
				}
			}
		}
		return q
	})
}

// sharesRun says whether a and b have n bytes in a row in common.
func sharesRun(a, b string, n int) bool {
	for i := 0; i+n <= len(a); i++ {
		if strings.Contains(b, a[i:i+n]) {
			return true
		}
	}
	return false
}
