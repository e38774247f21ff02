package dirstore_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"testing"

	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/dirstore"
)

// countingCtx counts the calls of its Err, as a context bound to a root's
// lock checks the lock's fence at every call.
type countingCtx struct {
	context.Context
	errs int
}

func (c *countingCtx) Err() error {
	c.errs++
	return c.Context.Err()
}

// sizesReader records the size of every read asked of it.
type sizesReader struct {
	r     io.Reader
	asked []int
}

func (s *sizesReader) Read(p []byte) (int, error) {
	s.asked = append(s.asked, len(p))
	return s.r.Read(p)
}

// TestReadDigestedReadsWholeBuffers: however small fn's reads, the store
// is read storage.HashBuffer bytes at a time with one context check each, and
// the Version is the sha256 of every byte, also those fn left unread.
func TestReadDigestedReadsWholeBuffers(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789abcdef"), 1<<16+7) // 1 MiB + 112 bytes
	src := &sizesReader{r: bytes.NewReader(data)}
	ctx := &countingCtx{Context: t.Context()}
	v, err := dirstore.ReadDigested(ctx, src, func(r io.Reader) error {
		var small [100]byte
		for range 10 {
			if _, err := io.ReadFull(r, small[:]); err != nil {
				return err
			}
		}
		return nil
	}, func(err error) error { return err })
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	if want := dirstore.SumVersion(sum[:]); v != want {
		t.Errorf("Version %q, want %q (%s)", v, want, hex.EncodeToString(sum[:]))
	}
	for i, n := range src.asked {
		if n < storage.HashBuffer {
			t.Errorf("read %d of %d asked for %d bytes, want at least %d", i, len(src.asked), n, storage.HashBuffer)
		}
	}
	if most := len(data)/storage.HashBuffer + 2; ctx.errs > most {
		t.Errorf("%d context checks for %d bytes, want at most %d", ctx.errs, len(data), most)
	}
}

// BenchmarkReadDigested hashes 16 MiB as the catalog's compare read does,
// through a context whose Err is counted (a fence check each).
func BenchmarkReadDigested(b *testing.B) {
	data := make([]byte, 16<<20)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		ctx := &countingCtx{Context: b.Context()}
		if _, err := dirstore.ReadDigested(ctx, bytes.NewReader(data), func(io.Reader) error { return nil },
			func(err error) error { return err }); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(ctx.errs), "checks/op")
	}
}
