package main

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/distributor-dev/distributor/internal/journal"
	"github.com/distributor-dev/distributor/internal/lock"
	"github.com/distributor-dev/distributor/internal/storage"
)

// intentPending says whether the root st holds a run's intent journal: the
// journal object, or a lock record that carries an intent (a run's intent
// travels in its lock record when it is small: docs/design.md, "The
// 10-request design").
func intentPending(t *testing.T, ctx context.Context, st storage.Store) bool {
	t.Helper()
	_, err := st.Stat(ctx, journal.Name)
	if err == nil {
		return true
	}
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("stat %s: %v", journal.Name, err)
	}
	info, _, err := lock.Read(ctx, st)
	if errors.Is(err, fs.ErrNotExist) {
		return false
	}
	if err != nil {
		t.Fatalf("read %s: %v", lock.Name, err)
	}
	return len(info.Intent) > 0
}

// intentPendingAt is intentPending for a local root directory, read with
// the os package.
func intentPendingAt(t *testing.T, root string) bool {
	t.Helper()
	if _, err := os.Stat(filepath.Join(root, journal.Name)); err == nil {
		return true
	}
	data, err := os.ReadFile(filepath.Join(root, lock.Name))
	if err != nil {
		return false
	}
	var info lock.Info
	return json.Unmarshal(data, &info) == nil && len(info.Intent) > 0
}

// takeOverIntent does with a dead run's lock record that carries an intent
// what the next writer does when it takes the lock over: it moves the
// intent to the journal (lock.MoveIntent) and removes the record. Call it
// only when no writer runs on the root.
func takeOverIntent(t *testing.T, st storage.Store) {
	t.Helper()
	ctx := context.Background()
	info, _, err := lock.Read(ctx, st)
	if errors.Is(err, fs.ErrNotExist) || (err == nil && len(info.Intent) == 0) {
		return
	}
	if err != nil {
		t.Fatalf("read %s: %v", lock.Name, err)
	}
	if err := lock.MoveIntent(ctx, st, info); err != nil {
		t.Fatal(err)
	}
	if err := st.Delete(ctx, lock.Name); err != nil {
		t.Fatal(err)
	}
}
