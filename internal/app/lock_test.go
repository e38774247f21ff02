package app

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/distributor-dev/distributor/internal/catalog"
	"github.com/distributor-dev/distributor/internal/config"
	"github.com/distributor-dev/distributor/internal/lock"
	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/local"
)

// TestLostLockCancelsWork: when another process takes the lock over (here:
// its record replaced behind the holder's back), the holder's renewal
// notices and the context of the work done under the lock is cancelled with
// lock.ErrLost, so the writer stops.
func TestLostLockCancelsWork(t *testing.T) {
	st, err := local.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	a := New("test", nil)
	a.LockLease = 300 * time.Millisecond // renewed every 100ms
	tx, err := a.begin(context.Background(), st, &config.Destination{}, "run", 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.End()
	held := tx.Context()
	other, _ := json.Marshal(lock.Info{ID: "someone-else", Host: "elsewhere", PID: 1, Command: "run",
		Acquired: time.Now(), ExpiresAt: time.Now().Add(time.Hour)})
	if _, err := st.Put(context.Background(), lock.Name, strings.NewReader(string(other)), int64(len(other)), storage.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-held.Done():
		if !errors.Is(context.Cause(held), lock.ErrLost) {
			t.Errorf("cancelled with %v, want lock.ErrLost", context.Cause(held))
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the work context was not cancelled after the lock was taken over")
	}
	// The new holder's lock is not removed by the old holder's release.
	tx.End()
	if info, _, err := lock.Read(context.Background(), st); err != nil || info.ID != "someone-else" {
		t.Errorf("after release: %+v %v", info, err)
	}
}

// TestCatalogUnchanged pins when run may reuse its unlocked plan under the
// lock: only for a catalog that is absent then and now, or unchanged and
// written well before the read (so a same-second commit on a backend with
// one-second timestamps cannot hide).
func TestCatalogUnchanged(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := local.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	r, _ := ReadRoot(ctx, st)
	if !catalogUnchanged(ctx, st, r) {
		t.Error("absent then and now: want unchanged")
	}
	put := func(s string) {
		if _, err := st.Put(ctx, catalog.FileName, strings.NewReader(s), int64(len(s)), storage.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	put(`{"schema_version": 4}`)
	if catalogUnchanged(ctx, st, r) {
		t.Error("absent then, present now: want changed")
	}
	r, _ = ReadRoot(ctx, st)
	if !catalogUnchanged(ctx, st, r) {
		t.Error("untouched since the read (fine-grained timestamp): want unchanged")
	}
	// A whole-second timestamp (as SFTP and S3 give) is trusted only once
	// it is older than the read by a margin.
	recent := time.Now().Truncate(time.Second)
	if err := os.Chtimes(filepath.Join(dir, catalog.FileName), recent, recent); err != nil {
		t.Fatal(err)
	}
	r, _ = ReadRoot(ctx, st)
	if catalogUnchanged(ctx, st, r) {
		t.Error("whole-second timestamp written just now: want changed")
	}
	old := time.Now().Add(-time.Minute).Truncate(time.Second)
	if err := os.Chtimes(filepath.Join(dir, catalog.FileName), old, old); err != nil {
		t.Fatal(err)
	}
	r, _ = ReadRoot(ctx, st)
	if !catalogUnchanged(ctx, st, r) {
		t.Error("old and untouched: want unchanged")
	}
	put(`{"schema_version": 44}`)
	if catalogUnchanged(ctx, st, r) {
		t.Error("rewritten after the read: want changed")
	}
}
