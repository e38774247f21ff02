package storage_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"testing"

	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/testutil/iocount"
)

// TestCancelledReadsNoErrWhileLive pins what a copy checks per buffer: a
// live context's Err is not called (no fence check, no clock read), and
// a done context's error is returned.
func TestCancelledReadsNoErrWhileLive(t *testing.T) {
	inner, cancel := context.WithCancelCause(t.Context())
	ctx := &iocount.Ctx{Context: inner}
	for range 3 {
		if err := storage.Cancelled(ctx); err != nil {
			t.Fatalf("live context: %v", err)
		}
	}
	if ctx.Errs != 0 {
		t.Fatalf("Err was called %d times on a live context, want 0", ctx.Errs)
	}
	cause := errors.New("fence lapsed")
	cancel(cause)
	if err := storage.Cancelled(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("done context: got %v, want context.Canceled", err)
	}
	if ctx.Errs != 1 {
		t.Fatalf("Err was called %d times on a done context, want 1", ctx.Errs)
	}
	if err := storage.Cancelled(context.Background()); err != nil {
		t.Fatalf("background context: %v", err)
	}
}

// TestHashReadsWholeBuffers: Hash asks its reader for HashBuffer bytes at
// a time, with one context check each, and hashes every byte.
func TestHashReadsWholeBuffers(t *testing.T) {
	data := bytes.Repeat([]byte{7}, 3*storage.HashBuffer+5)
	src := &iocount.Reader{R: bytes.NewReader(data)}
	ctx := &iocount.Ctx{Context: t.Context()}
	h := sha256.New()
	n, err := storage.Hash(ctx, h, src)
	if want := sha256.Sum256(data); err != nil || n != int64(len(data)) || !bytes.Equal(h.Sum(nil), want[:]) {
		t.Fatalf("Hash = %d, %v; sum %x, want %d bytes, %x", n, err, h.Sum(nil), len(data), want)
	}
	for i, size := range src.Asked {
		if size < storage.HashBuffer {
			t.Errorf("read %d asked for %d bytes, want %d", i, size, storage.HashBuffer)
		}
	}
	if ctx.Errs != len(src.Asked) || ctx.Errs > 5 {
		t.Errorf("%d context checks for %d reads of %d bytes", ctx.Errs, len(src.Asked), len(data))
	}
}
