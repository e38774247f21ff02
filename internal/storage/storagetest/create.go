package storagetest

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/dirstore"
)

// TempCreate describes an adapter whose exclusive create (PutIf with the
// zero Version) writes a temporary file, then links it into place, on a
// file system this machine can read (local disk, or a test server running
// here). See WithTempCreate.
type TempCreate struct {
	// Reopen opens another store on the root of s, as another process
	// would. The test owns its cleanup, as for Run's newStore.
	Reopen func(t *testing.T, s storage.Store) storage.Store
	// Dir returns the directory of this machine that is the root of s.
	Dir func(s storage.Store) string
	// Races is how many creates the race test runs (60 if 0), each
	// against one sweep started after a delay of up to RaceSpread, in 20
	// steps: enough to hit the window between write and link many times.
	Races      int
	RaceSpread time.Duration
}

// WithTempCreate lets the suite test that exclusive creates survive the
// lock holder's SweepTemp removing their temporary files before they are
// linked (dirstore.ErrTempVanished, dirstore.CreateAttempts). Without it
// those tests are skipped.
func WithTempCreate(tc TempCreate) Option {
	return func(c *config) { c.tempCreate = &tc }
}

// tempCreateTests need WithTempCreate.
var tempCreateTests = []struct {
	name string
	fn   func(t *testing.T, s storage.Store, tc *TempCreate)
}{
	{"ExclusiveCreateSurvivesSweep", testExclusiveCreateSurvivesSweep},
	{"ExclusiveCreateGivesUpAfterRepeatedSweeps", testExclusiveCreateGivesUp},
	{"ExclusiveCreateChecksContextBeforeLink", testExclusiveCreateChecksContext},
	{"ExclusiveCreateRacesSweep", testExclusiveCreateRacesSweep},
}

// written is content whose reader calls hook when the write has consumed
// all of it (the read that finds its end): every attempt of an exclusive
// create copies its content to the temporary file and only then links it
// into place, so hook runs between the two, the window a sweep can hit,
// without a hook in the adapter.
type written struct {
	*bytes.Reader
	hook func()
}

func (w *written) Read(p []byte) (int, error) {
	n, err := w.Reader.Read(p)
	if n == 0 && err == io.EOF {
		w.hook()
	}
	return n, err
}

// createWith is an exclusive create of data at p whose hook runs, in
// every attempt, once the temporary file holds data and before it is
// linked.
func createWith(ctx context.Context, s storage.Store, p, data string, hook func()) (storage.Version, error) {
	return s.Put(ctx, p, &written{Reader: bytes.NewReader([]byte(data)), hook: hook}, int64(len(data)), storage.IfVersion(""))
}

// testExclusiveCreateSurvivesSweep: the lock holder's SweepTemp removes the
// temporary file (and its directories) of a waiter's exclusive create
// between the write and the link; the create starts over and succeeds.
func testExclusiveCreateSurvivesSweep(t *testing.T, waiter storage.Store, tc *TempCreate) {
	ctx := t.Context()
	holder, root := tc.Reopen(t, waiter), tc.Dir(waiter)
	put(t, waiter, "locks/dir/warm", "x") // the waiter knows the directories...
	if err := holder.Delete(ctx, "locks/dir/warm"); err != nil {
		t.Fatal(err)
	}
	sweeps := 0
	v, err := createWith(ctx, waiter, "locks/dir/lock", "mine", func() {
		if sweeps == 2 {
			return
		}
		sweeps++
		found, err := holder.SweepTemp(ctx, storage.SweepOptions{})
		if err != nil || len(found) != 1 || path.Dir(found[0]) != "locks/dir" || !strings.HasPrefix(path.Base(found[0]), storage.TempPrefix) {
			t.Errorf("SweepTemp = %q, %v; want the one temporary file of the create in locks/dir", found, err)
		}
		// ...that the sweep removes
		if _, err := os.Lstat(filepath.Join(root, "locks")); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("the sweep left the emptied directory locks: %v", err)
		}
	})
	if err != nil {
		t.Fatalf("PutIf: %v", err)
	}
	if sweeps != 2 {
		t.Errorf("%d sweeps, want 2", sweeps)
	}
	data, v2, err := holder.Get(ctx, "locks/dir/lock")
	if err != nil || string(data) != "mine" || v2 != v {
		t.Errorf("Get = %q, %q, %v; want %q, %q", data, v2, err, "mine", v)
	}
	if got, want := DirEntries(t, root), []string{"locks", "locks/dir", "locks/dir/lock"}; !slices.Equal(got, want) {
		t.Errorf("on disk: %q, want %q", got, want)
	}
	// The condition still holds against the created object.
	if _, err := storage.PutIf(ctx, waiter, "locks/dir/lock", []byte("other"), ""); !errors.Is(err, storage.ErrPrecondition) {
		t.Errorf("second PutIf: got %v, want ErrPrecondition", err)
	}
}

// testExclusiveCreateGivesUp: a temporary file swept every time fails the
// create after dirstore.CreateAttempts attempts, with an error that is
// neither a failed condition nor a missing object, and leaves nothing
// behind.
func testExclusiveCreateGivesUp(t *testing.T, waiter storage.Store, tc *TempCreate) {
	ctx := t.Context()
	holder := tc.Reopen(t, waiter)
	attempts := 0
	_, err := createWith(ctx, waiter, "locks/lock", "mine", func() {
		attempts++
		if _, err := holder.SweepTemp(ctx, storage.SweepOptions{}); err != nil {
			t.Error(err)
		}
	})
	if err == nil || errors.Is(err, storage.ErrPrecondition) || errors.Is(err, storage.ErrNotExist) || !errors.Is(err, dirstore.ErrTempVanished) {
		t.Fatalf("PutIf: got %v, want the vanished temporary file error", err)
	}
	if attempts != dirstore.CreateAttempts {
		t.Errorf("%d attempts, want %d", attempts, dirstore.CreateAttempts)
	}
	if left := DirEntries(t, tc.Dir(waiter)); len(left) > 0 {
		t.Errorf("left on disk: %q", left)
	}
}

// testExclusiveCreateChecksContext: a context cancelled once the temporary
// file holds the content stops the create before the link.
func testExclusiveCreateChecksContext(t *testing.T, s storage.Store, tc *TempCreate) {
	ctx, cancel := context.WithCancel(t.Context())
	if _, err := createWith(ctx, s, "a/lock", "x", cancel); !errors.Is(err, context.Canceled) {
		t.Fatalf("PutIf: got %v, want context.Canceled", err)
	}
	if left := DirEntries(t, tc.Dir(s)); len(left) > 0 {
		t.Errorf("left on disk: %q", left)
	}
}

// testExclusiveCreateRacesSweep races one SweepTemp of the holder against
// each exclusive create of a waiter, with varying delays: every create
// succeeds (at most one attempt per create can lose its temporary file).
func testExclusiveCreateRacesSweep(t *testing.T, waiter storage.Store, tc *TempCreate) {
	ctx := t.Context()
	holder := tc.Reopen(t, waiter)
	var links atomic.Int64
	n := cmp.Or(tc.Races, 60)
	for i := range n {
		var wg sync.WaitGroup
		wg.Go(func() {
			time.Sleep(time.Duration(i%20) * tc.RaceSpread / 20)
			if _, err := holder.SweepTemp(ctx, storage.SweepOptions{}); err != nil {
				t.Errorf("SweepTemp: %v", err)
			}
		})
		p := fmt.Sprintf("locks/%d/lock", i)
		_, err := createWith(ctx, waiter, p, "x", func() { links.Add(1) })
		wg.Wait()
		if err != nil {
			t.Fatalf("PutIf(%q) of a new name: %v", p, err)
		}
	}
	t.Logf("%d creates, %d started over after a sweep", n, links.Load()-int64(n))
}
