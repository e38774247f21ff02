package storagetest

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/distributor-dev/distributor/internal/storage"
)

// DirSnapshot maps every file below a local directory (reserved and
// temporary names included, so leftovers show) to its bytes. A missing
// directory is empty.
func DirSnapshot(t testing.TB, root string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		m[filepath.ToSlash(rel)] = string(b)
		return nil
	})
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	return m
}

// Snapshot maps every object a store lists (reserved names included) to its
// bytes.
func Snapshot(t testing.TB, st storage.Store) map[string]string {
	t.Helper()
	ctx := context.Background()
	var paths []string
	if err := st.List(ctx, "", func(i storage.Info) error { paths = append(paths, i.Path); return nil }); err != nil {
		t.Fatal(err)
	}
	m := make(map[string]string, len(paths))
	for _, p := range paths {
		rc, err := st.Open(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		m[p] = string(b)
	}
	return m
}
