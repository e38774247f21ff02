package dirstore_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"testing"

	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/dirstore"
	"github.com/distributor-dev/distributor/internal/testutil/iocount"
)

// TestReadDigestedReadsWholeBuffers: however small fn's reads, the store
// is read storage.HashBuffer bytes at a time with one context check each, and
// the Version is the sha256 of every byte, also those fn left unread.
func TestReadDigestedReadsWholeBuffers(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789abcdef"), 1<<16+7) // 1 MiB + 112 bytes
	src := &iocount.Reader{R: bytes.NewReader(data)}
	ctx := &iocount.Ctx{Context: t.Context()}
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
	for i, n := range src.Asked {
		if n < storage.HashBuffer {
			t.Errorf("read %d of %d asked for %d bytes, want at least %d", i, len(src.Asked), n, storage.HashBuffer)
		}
	}
	if most := len(data)/storage.HashBuffer + 2; ctx.Errs > most {
		t.Errorf("%d context checks for %d bytes, want at most %d", ctx.Errs, len(data), most)
	}
}

// BenchmarkReadDigested hashes 16 MiB as the catalog's compare read does,
// through a context whose Err is counted (a fence check each).
func BenchmarkReadDigested(b *testing.B) {
	data := make([]byte, 16<<20)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		ctx := &iocount.Ctx{Context: b.Context()}
		if _, err := dirstore.ReadDigested(ctx, bytes.NewReader(data), func(io.Reader) error { return nil },
			func(err error) error { return err }); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(ctx.Errs), "checks/op")
	}
}
