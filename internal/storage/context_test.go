package storage_test

import (
	"context"
	"errors"
	"testing"

	"github.com/distributor-dev/distributor/internal/storage"
)

// countingCtx counts the calls of its Err, as a context bound to the
// root's lock checks the lock's fence (a clock read) at every call.
type countingCtx struct {
	context.Context
	errs int
}

func (c *countingCtx) Err() error {
	c.errs++
	return c.Context.Err()
}

// TestCancelledReadsNoErrWhileLive pins what a copy checks per buffer: a
// live context's Err is not called (no fence check, no clock read), and
// a done context's error is returned.
func TestCancelledReadsNoErrWhileLive(t *testing.T) {
	inner, cancel := context.WithCancelCause(t.Context())
	ctx := &countingCtx{Context: inner}
	for range 3 {
		if err := storage.Cancelled(ctx); err != nil {
			t.Fatalf("live context: %v", err)
		}
	}
	if ctx.errs != 0 {
		t.Fatalf("Err was called %d times on a live context, want 0", ctx.errs)
	}
	cause := errors.New("fence lapsed")
	cancel(cause)
	if err := storage.Cancelled(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("done context: got %v, want context.Canceled", err)
	}
	if ctx.errs != 1 {
		t.Fatalf("Err was called %d times on a done context, want 1", ctx.errs)
	}
	if err := storage.Cancelled(context.Background()); err != nil {
		t.Fatalf("background context: %v", err)
	}
}
