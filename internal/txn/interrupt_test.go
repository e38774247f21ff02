package txn

import (
	"context"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/distributor-dev/distributor/internal/catalog"
	"github.com/distributor-dev/distributor/internal/journal"
	"github.com/distributor-dev/distributor/internal/lock"
	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/testutil/testtime"
)

// silentStore is a store whose server stops answering once stalled is
// set: every call after that waits until its context is done, and the
// causes of those contexts are kept.
type silentStore struct {
	storage.Store
	stalled atomic.Bool
	causes  chan error
}

func (s *silentStore) wait(ctx context.Context) error {
	<-ctx.Done()
	select {
	case s.causes <- context.Cause(ctx):
	default:
	}
	return ctx.Err()
}

func (s *silentStore) Get(ctx context.Context, p string) ([]byte, storage.Version, error) {
	if s.stalled.Load() {
		return nil, "", s.wait(ctx)
	}
	return s.Store.Get(ctx, p)
}

func (s *silentStore) Open(ctx context.Context, p string) (io.ReadCloser, error) {
	if s.stalled.Load() {
		return nil, s.wait(ctx)
	}
	return s.Store.Open(ctx, p)
}

func (s *silentStore) Put(ctx context.Context, p string, r io.Reader, size int64, opts storage.PutOptions) (storage.Version, error) {
	if p != journal.Name && !strings.HasPrefix(p, lock.Name) {
		s.stalled.Store(true) // the first output's upload stalls
	}
	if s.stalled.Load() {
		return "", s.wait(ctx)
	}
	return s.Store.Put(ctx, p, r, size, opts)
}

// TestInterruptedCleanupIsBounded: once the caller's context is done (a
// signal), a transaction whose server stopped answering mid-upload does
// not wait out its cleanup timeout (a minute here): its cleanup and the
// release of its lock are cancelled InterruptedCleanup after the
// interruption, naming it, and the root keeps its journal.
func TestInterruptedCleanupIsBounded(t *testing.T) {
	dir, base := newRoot(t)
	st := &silentStore{Store: base, causes: make(chan error, 8)}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tx, err := Begin(ctx, Options{Store: st, Command: "run", Lock: lock.Locker{Lease: time.Hour, Wait: time.Second},
		Now: func() time.Time { return now }, CleanupTimeout: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	ch := change(map[string]string{"a.txt": "a"})
	ch.Final = &catalog.Edit{Fresh: true, Put: []catalog.Output{record("a.txt", "a")}}
	done := make(chan *Result, 1)
	go func() {
		res, _ := tx.Apply(ch)
		tx.End()
		done <- res
	}()
	for !st.stalled.Load() {
		time.Sleep(time.Millisecond)
	}
	cancel() // the signal
	var res *Result
	select {
	case res = <-done:
	case <-time.After(testtime.Scale(InterruptedCleanup + 30*time.Second)):
		t.Fatal("the interrupted transaction still waits on the silent server")
	}
	if !res.JournalKept || !exists(t, dir, journal.Name) {
		t.Errorf("journal kept %v (on disk %v), want the journal left for the next writer", res.JournalKept, exists(t, dir, journal.Name))
	}
	// The upload was cancelled by the signal itself; the cleanup's re-read
	// of the catalog and the lock's release by the bound.
	close(st.causes)
	bounded := 0
	for c := range st.causes {
		if c != nil && strings.Contains(c.Error(), "the run was interrupted") {
			bounded++
		}
	}
	if bounded < 2 {
		t.Errorf("%d silent calls were cut by the interruption's bound, want the cleanup's and the release's", bounded)
	}
}
