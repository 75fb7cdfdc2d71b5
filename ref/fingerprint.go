package ref

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
)

// Op names the kind of request a fingerprint is taken of (for example 0x0103
// for "final settlement"). Two requests with equal fields but different ops
// have different fingerprints.
type Op uint32

// Fingerprint is the 64-bit identity of a request, the key of the in-memory
// Window. It is the first half of the request's 128-bit Key.
//
// What a collision costs: two distinct requests with equal fingerprints make
// the second look like a retry of the first, so it is dropped: a lost
// settlement. The Settler therefore never trusts 64 bits alone: the Window
// stores the other half of the Key as its value and a hit whose value differs
// falls through to the store (counted in SettlerStats.Collisions). A false
// duplicate needs all 128 bits to collide.
//
// The bound at the sizes users run: among n retained keys the chance of any
// collision is about n²/2^(b+1) for b bits. For 64 bits and n = 10^9 records
// (30 settlements a second for a year) that is 2.7%: a real, silent loss over
// years of retention, which is why durable stores key records by the 128-bit
// Key (n = 10^12 gives 1.5e-15). Only the seed-form Settle(fp, now), which has
// nothing but the 64-bit fingerprint, keys its records by 64 bits; do not use
// it where records are kept for years.
type Fingerprint uint64

// Key is the 128-bit durable identity of a request: Hi is its Fingerprint,
// Lo is 64 more bits of the same digest. Stores persist Key (see Bytes).
type Key struct{ Hi, Lo uint64 }

// Key returns the durable key the seed-form Settle uses for fp: the 64
// fingerprint bits and zero. See the collision bound on Fingerprint.
func (fp Fingerprint) Key() Key { return Key{Hi: uint64(fp)} }

// Fingerprint returns the window key of k.
func (k Key) Fingerprint() Fingerprint { return Fingerprint(k.Hi) }

// Bytes returns k as 16 big-endian bytes, the form stores persist.
func (k Key) Bytes() [16]byte {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], k.Hi)
	binary.BigEndian.PutUint64(b[8:], k.Lo)
	return b
}

// KeyFromBytes is the inverse of Key.Bytes.
func KeyFromBytes(b [16]byte) Key {
	return Key{Hi: binary.BigEndian.Uint64(b[:8]), Lo: binary.BigEndian.Uint64(b[8:])}
}

// String returns k as 32 lowercase hex digits (Hi then Lo), the grant key
// stores and sinks use as text.
func (k Key) String() string {
	b := k.Bytes()
	return hex.EncodeToString(b[:])
}

// fingerprintDomain separates this encoding from every other use of SHA-256.
// The "v1" is part of every persisted key: changing the encoding below means a
// new domain string, never an edit of this one (golden vectors in
// fingerprint_test.go fail first).
const fingerprintDomain = "onceproof/fingerprint/v1\x00"

// FingerprintOf returns the fingerprint of a request: an op and its fields.
// It is the first 64 bits of KeyOf(op, fields...).
func FingerprintOf(op Op, fields ...uint64) Fingerprint {
	return KeyOf(op, fields...).Fingerprint()
}

// KeyOf returns the 128-bit key of a request: the first 16 bytes of
// SHA-256(domain || op (4 bytes BE) || len(fields) (4 bytes BE) || each field
// (8 bytes BE)). Fixed-width fields plus the count make every boundary
// unambiguous: (1,2), (1,2,0), (12) and (0x0102) are different byte strings.
// SHA-256 is chosen because it is specified outside this module and will hash
// the same bytes the same way on every machine and Go version, which a
// persisted key needs; it is not there for secrecy.
func KeyOf(op Op, fields ...uint64) Key {
	// Requests have a handful of fields; a stack buffer covers 16 of them
	// without allocating (25 + 8 + 16*8 = 161 bytes).
	var buf [256]byte
	b := append(buf[:0], fingerprintDomain...)
	b = binary.BigEndian.AppendUint32(b, uint32(op))
	b = binary.BigEndian.AppendUint32(b, uint32(len(fields)))
	for _, f := range fields {
		b = binary.BigEndian.AppendUint64(b, f)
	}
	sum := sha256.Sum256(b)
	return Key{Hi: binary.BigEndian.Uint64(sum[:8]), Lo: binary.BigEndian.Uint64(sum[8:16])}
}
