package ref

import (
	"crypto/sha256"
	"encoding/binary"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

// fingerprintInputs are the requests pinned by testdata/fingerprints.golden.
// Keys are persisted for years: if this test fails, the function changed and
// every stored record would stop matching its retries. Never rewrite the
// golden file to make it pass; add a new domain version instead.
var fingerprintInputs = []struct {
	op     Op
	fields []uint64
}{
	{0, nil},
	{0x0103, []uint64{42, 7, 9001}},
	{0x0201, []uint64{42, 7, 100, 200}},
	{0x0301, []uint64{42, 7, 77}},
	{1, []uint64{1, 2}},
	{1, []uint64{1, 2, 0}},
	{1, []uint64{12}},
	{2, []uint64{1, 2}},
	{1, []uint64{0x0102}},
	{0xFFFFFFFF, []uint64{^uint64(0), 0, ^uint64(0)}},
}

func renderFingerprints() string {
	var b strings.Builder
	b.WriteString("# op fields -> key (Hi = fingerprint, Lo)\n# regenerate: go test ./ref -run TestFingerprintGolden -update (only with a new domain version)\n")
	for _, in := range fingerprintInputs {
		fmt.Fprintf(&b, "%#x %v -> %v\n", uint32(in.op), in.fields, KeyOf(in.op, in.fields...))
	}
	return b.String()
}

func TestFingerprintGolden(t *testing.T) {
	path := filepath.Join("testdata", "fingerprints.golden")
	got := renderFingerprints()
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (create it: go test ./ref -run TestFingerprintGolden -update)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Fatalf("fingerprints changed (-golden +now); persisted keys would no longer match:\n%s\nreproduce: go test ./ref -run TestFingerprintGolden", diff)
	}
}

// TestKeyOfMatchesDocumentedEncoding recomputes one key from the byte layout
// the KeyOf doc comment specifies, so the doc and the code cannot drift.
func TestKeyOfMatchesDocumentedEncoding(t *testing.T) {
	var b []byte
	b = append(b, "onceproof/fingerprint/v1\x00"...)
	b = binary.BigEndian.AppendUint32(b, 0x0103)
	b = binary.BigEndian.AppendUint32(b, 3)
	for _, f := range []uint64{42, 7, 9001} {
		b = binary.BigEndian.AppendUint64(b, f)
	}
	sum := sha256.Sum256(b)
	var want [16]byte
	copy(want[:], sum[:16])
	if got := KeyOf(0x0103, 42, 7, 9001).Bytes(); got != want {
		t.Fatalf("KeyOf = %x, documented encoding gives %x", got, want)
	}
	if FingerprintOf(0x0103, 42, 7, 9001) != Fingerprint(binary.BigEndian.Uint64(sum[:8])) {
		t.Fatal("FingerprintOf is not the first 8 bytes of the digest")
	}
}

func TestFingerprintFieldBoundariesAreUnambiguous(t *testing.T) {
	cases := map[string]Key{
		"op1(1,2)":   KeyOf(1, 1, 2),
		"op1(1,2,0)": KeyOf(1, 1, 2, 0),
		"op1(12)":    KeyOf(1, 12),
		"op1(0x102)": KeyOf(1, 0x0102),
		"op2(1,2)":   KeyOf(2, 1, 2),
		"op1()":      KeyOf(1),
		"op0()":      KeyOf(0),
		"op1(0)":     KeyOf(1, 0),
	}
	seen := map[Key]string{}
	for name, k := range cases {
		if other, dup := seen[k]; dup {
			t.Errorf("%s and %s have the same key %v", name, other, k)
		}
		seen[k] = name
	}
}

func TestKeyBytesRoundTrip(t *testing.T) {
	k := KeyOf(7, 1, 2, 3)
	if got := KeyFromBytes(k.Bytes()); got != k {
		t.Fatalf("KeyFromBytes(Bytes(%v)) = %v", k, got)
	}
	if len(k.String()) != 32 {
		t.Fatalf("String() = %q, want 32 hex digits", k.String())
	}
}

func TestFingerprintOfDoesNotAllocate(t *testing.T) {
	if n := testing.AllocsPerRun(100, func() { _ = FingerprintOf(0x0103, 42, 7, 9001) }); n != 0 {
		t.Fatalf("FingerprintOf allocates %v times per call, want 0", n)
	}
}
