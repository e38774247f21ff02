package app

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/distributor-dev/distributor/internal/lock"
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
	held, unlock, err := a.LockRootContext(context.Background(), st, "run")
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	other, _ := json.Marshal(lock.Info{ID: "someone-else", Host: "elsewhere", PID: 1, Command: "run",
		Acquired: time.Now(), ExpiresAt: time.Now().Add(time.Hour)})
	if err := st.Put(context.Background(), lock.Name, strings.NewReader(string(other)), int64(len(other))); err != nil {
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
	unlock()
	if info, _, err := lock.Read(context.Background(), st); err != nil || info.ID != "someone-else" {
		t.Errorf("after release: %+v %v", info, err)
	}
}
