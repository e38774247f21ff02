package parhash

import (
	"crypto/sha256"
	"encoding/hex"
	"math/rand/v2"
	"testing"
)

// TestHashIsSha256: writes of any sizes, the buffers reused between
// them, hash to the digest of their concatenation, on a goroutine or inline.
func TestHashIsSha256(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for i := range 20 {
		p := New(sha256.New())
		if i%2 == 1 {
			p = Inline(sha256.New())
		}
		want := sha256.New()
		chunk := make([]byte, 300<<10)
		for range r.IntN(40) {
			b := chunk[:r.IntN(len(chunk))]
			for i := range b {
				b[i] = byte(r.Uint32())
			}
			p.Write(b) // the caller reuses chunk at once
			want.Write(b)
		}
		if got, w := hex.EncodeToString(p.Sum()), hex.EncodeToString(want.Sum(nil)); got != w {
			t.Fatalf("Sum %s, want %s", got, w)
		}
		p.Close() // a second stop is harmless
	}
}

// TestWriteAfterSumFails: a write after the digest was taken is refused
// with an error (it would otherwise be lost, or end the process), and the
// digest stays that of what came before.
func TestWriteAfterSumFails(t *testing.T) {
	for _, p := range []*Hash{New(sha256.New()), Inline(sha256.New())} {
		writeAfterSum(t, p)
	}
}

func writeAfterSum(t *testing.T, p *Hash) {
	t.Helper()
	p.Write([]byte("abc"))
	sum := hex.EncodeToString(p.Sum())
	if n, err := p.Write([]byte("more")); err == nil || n != 0 {
		t.Fatalf("Write after Sum: %d, %v, want an error", n, err)
	}
	want := sha256.Sum256([]byte("abc"))
	if got := hex.EncodeToString(p.Sum()); got != sum || got != hex.EncodeToString(want[:]) {
		t.Fatalf("Sum after a refused write: %s, want %x", got, want)
	}
}
