package parhash

import (
	"crypto/sha256"
	"encoding/hex"
	"math/rand/v2"
	"testing"
)

// TestHashIsSha256: writes of any sizes, the buffers reused between
// them, hash to the digest of their concatenation.
func TestHashIsSha256(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for range 20 {
		p := New(sha256.New())
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
