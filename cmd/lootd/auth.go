package main

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/onceproof/onceproof/ref/loot"
)

// Player tokens: "v1.<player>.<expires>.<mac>", sent as "Authorization:
// Bearer <token>", where player is the decimal player id, expires the
// Unix second after which the token is refused, and mac the unpadded
// base64url HMAC-SHA256, under the shared key, of "v1.<player>.<expires>".
// Whoever holds the key (the login service, `lootd token`) mints them;
// lootd only checks them. The version prefix lets a later scheme coexist.
const tokenVersion = "v1"

// minKeyLen is the shortest key accepted: 32 bytes is SHA-256's block
// output, the strength HMAC-SHA256 can give.
const minKeyLen = 32

var errUnauthenticated = errors.New("unauthenticated")

// authenticator finds the player behind a request.
type authenticator struct {
	header string // trusted gateway header, or ""
	key    []byte // token key, or nil
	now    func() time.Time
}

// newAuthenticator reads the token key file, if any.
func newAuthenticator(header, keyFile string, now func() time.Time) (*authenticator, error) {
	a := &authenticator{header: header, now: now}
	if keyFile != "" {
		key, err := readKey(keyFile)
		if err != nil {
			return nil, err
		}
		a.key = key
	}
	return a, nil
}

// readKey reads a token key file; surrounding white space is not part of
// the key.
func readKey(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("token key: %w", err)
	}
	key := bytes.TrimSpace(b)
	if len(key) < minKeyLen {
		return nil, fmt.Errorf("token key %s: %d bytes, want >= %d", path, len(key), minKeyLen)
	}
	return key, nil
}

// caller returns the authenticated player of r: a Bearer token when the
// key is configured and the request carries one, else the trusted header
// when configured. Anything else is errUnauthenticated, with the reason.
func (a *authenticator) caller(r *http.Request) (loot.Caller, error) {
	if a.key != nil {
		if h := r.Header.Get("Authorization"); h != "" {
			tok, ok := strings.CutPrefix(h, "Bearer ")
			if !ok {
				return loot.Caller{}, fmt.Errorf("%w: Authorization is not a Bearer token", errUnauthenticated)
			}
			p, err := verifyToken(a.key, tok, a.now())
			return loot.Caller{Player: p}, err
		}
	}
	if a.header != "" {
		if v := r.Header.Get(a.header); v != "" {
			p, err := parsePlayer(v)
			if err != nil {
				return loot.Caller{}, fmt.Errorf("%w: header %s: %w", errUnauthenticated, a.header, err)
			}
			return loot.Caller{Player: p}, nil
		}
	}
	return loot.Caller{}, fmt.Errorf("%w: %s", errUnauthenticated, a.expects())
}

// expects says what an authenticated request carries, for the refusal.
func (a *authenticator) expects() string {
	switch {
	case a.key != nil && a.header != "":
		return "send Authorization: Bearer <token> (or the gateway's " + a.header + ")"
	case a.key != nil:
		return "send Authorization: Bearer <token>"
	}
	return "the gateway sets " + a.header
}

func parsePlayer(s string) (loot.PlayerID, error) {
	p, err := strconv.ParseInt(s, 10, 64)
	if err != nil || p <= 0 {
		return 0, fmt.Errorf("player id %q is not a positive integer", s)
	}
	return loot.PlayerID(p), nil
}

// mintToken returns the token of player p valid until expires.
func mintToken(key []byte, p loot.PlayerID, expires time.Time) string {
	body := fmt.Sprintf("%s.%d.%d", tokenVersion, p, expires.Unix())
	return body + "." + tokenMAC(key, body)
}

func tokenMAC(key []byte, body string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(body))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// verifyToken returns the player of tok if its MAC is the key's and it has
// not expired at now.
func verifyToken(key []byte, tok string, now time.Time) (loot.PlayerID, error) {
	i := strings.LastIndexByte(tok, '.')
	if i < 0 {
		return 0, fmt.Errorf("%w: malformed token", errUnauthenticated)
	}
	body, mac := tok[:i], tok[i+1:]
	if !hmac.Equal([]byte(mac), []byte(tokenMAC(key, body))) {
		return 0, fmt.Errorf("%w: token signature does not verify", errUnauthenticated)
	}
	f := strings.Split(body, ".")
	if len(f) != 3 || f[0] != tokenVersion {
		return 0, fmt.Errorf("%w: token is not %s.<player>.<expires>", errUnauthenticated, tokenVersion)
	}
	p, err := parsePlayer(f[1])
	if err != nil {
		return 0, fmt.Errorf("%w: %w", errUnauthenticated, err)
	}
	exp, err := strconv.ParseInt(f[2], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: token expiry %q", errUnauthenticated, f[2])
	}
	if now.Unix() > exp {
		return 0, fmt.Errorf("%w: token expired at %s", errUnauthenticated, time.Unix(exp, 0).UTC().Format(time.RFC3339))
	}
	return p, nil
}
