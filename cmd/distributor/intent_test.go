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
