package local

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/distributor-dev/distributor/internal/storage"
)

// twoStores opens two stores on one root: the lock holder, which sweeps,
// and a waiter (another process) that creates the lock.
func twoStores(t *testing.T) (root string, holder, waiter *Store) {
	t.Helper()
	root = t.TempDir()
	var err error
	if holder, err = New(root); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { holder.Close() })
	if waiter, err = New(root); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { waiter.Close() })
	return root, holder, waiter
}

// leftovers returns every entry below root, as slash paths.
func leftovers(t *testing.T, root string) []string {
	t.Helper()
	var found []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != root {
			rel, _ := filepath.Rel(root, p)
			found = append(found, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

// TestExclusiveCreateSurvivesSweep: the lock holder's SweepTemp removes the
// temporary file (and its directories) of a waiter's exclusive create
// between the write and the link; the create starts over and succeeds.
func TestExclusiveCreateSurvivesSweep(t *testing.T) {
	ctx := t.Context()
	root, holder, waiter := twoStores(t)
	sweeps := 0
	waiter.beforeLink = func(tmp string) {
		if sweeps == 2 {
			return
		}
		sweeps++
		found, err := holder.SweepTemp(ctx, storage.SweepOptions{})
		if err != nil || !slices.Equal(found, []string{tmp}) {
			t.Errorf("SweepTemp = %q, %v; want %q", found, err, tmp)
		}
		if _, err := os.Lstat(filepath.Join(root, "locks")); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("the sweep left the emptied directory locks: %v", err)
		}
	}
	v, err := waiter.PutIf(ctx, "locks/dir/lock", []byte("mine"), "")
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
	if got, want := leftovers(t, root), []string{"locks", "locks/dir", "locks/dir/lock"}; !slices.Equal(got, want) {
		t.Errorf("on disk: %q, want %q", got, want)
	}
	// The condition still holds against the created object.
	if _, err := waiter.PutIf(ctx, "locks/dir/lock", []byte("other"), ""); !errors.Is(err, storage.ErrPrecondition) {
		t.Errorf("second PutIf: got %v, want ErrPrecondition", err)
	}
}

// TestExclusiveCreateGivesUpAfterRepeatedSweeps: a temporary file swept
// every time fails the create after createAttempts attempts, with an error
// that is neither a failed condition nor a missing object, and leaves
// nothing behind.
func TestExclusiveCreateGivesUpAfterRepeatedSweeps(t *testing.T) {
	ctx := t.Context()
	root, holder, waiter := twoStores(t)
	attempts := 0
	waiter.beforeLink = func(string) {
		attempts++
		if _, err := holder.SweepTemp(ctx, storage.SweepOptions{}); err != nil {
			t.Error(err)
		}
	}
	_, err := waiter.PutIf(ctx, "locks/lock", []byte("mine"), "")
	if err == nil || errors.Is(err, storage.ErrPrecondition) || errors.Is(err, storage.ErrNotExist) || !errors.Is(err, errTempVanished) {
		t.Fatalf("PutIf: got %v, want the vanished temporary file error", err)
	}
	if attempts != createAttempts {
		t.Errorf("%d attempts, want %d", attempts, createAttempts)
	}
	if left := leftovers(t, root); len(left) > 0 {
		t.Errorf("left on disk: %q", left)
	}
}

// TestExclusiveCreateChecksContextBeforeLink: a context cancelled after the
// temporary file is written stops the create before the link.
func TestExclusiveCreateChecksContextBeforeLink(t *testing.T) {
	root, _, waiter := twoStores(t)
	ctx, cancel := context.WithCancel(t.Context())
	waiter.beforeLink = func(string) { cancel() }
	if _, err := waiter.PutIf(ctx, "a/lock", []byte("x"), ""); !errors.Is(err, context.Canceled) {
		t.Fatalf("PutIf: got %v, want context.Canceled", err)
	}
	if left := leftovers(t, root); len(left) > 0 {
		t.Errorf("left on disk: %q", left)
	}
}

// TestExclusiveCreateRacesSweep races one SweepTemp of the holder against
// each exclusive create of a waiter, with varying delays: every create
// succeeds (at most one attempt per create can lose its temporary file).
func TestExclusiveCreateRacesSweep(t *testing.T) {
	ctx := t.Context()
	_, holder, waiter := twoStores(t)
	var links atomic.Int64
	waiter.beforeLink = func(string) { links.Add(1) }
	const n = 200
	for i := range n {
		var wg sync.WaitGroup
		wg.Go(func() {
			time.Sleep(time.Duration(i%25) * 10 * time.Microsecond)
			if _, err := holder.SweepTemp(ctx, storage.SweepOptions{}); err != nil {
				t.Errorf("SweepTemp: %v", err)
			}
		})
		p := fmt.Sprintf("locks/%d/lock", i)
		_, err := waiter.PutIf(ctx, p, []byte("x"), "")
		wg.Wait()
		if err != nil && !errors.Is(err, storage.ErrPrecondition) {
			t.Fatalf("PutIf(%q): %v", p, err)
		}
		if err != nil {
			t.Errorf("PutIf(%q) of a new name: %v", p, err)
		}
	}
	t.Logf("%d creates, %d started over after a sweep", n, links.Load()-n)
}
