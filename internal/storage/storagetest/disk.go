package storagetest

import (
	"crypto/rand"
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"testing"

	"github.com/distributor-dev/distributor/internal/storage"
)

// Helpers for the tests of adapters whose root is a directory of this
// machine (local disk, or a test server running here).

// DirEntries returns every entry below the directory root of this machine
// (files and directories, temporary and reserved names included), as
// slash paths relative to root in the order of filepath.WalkDir; nil for a
// missing root.
func DirEntries(t testing.TB, root string) []string {
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
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	return found
}

// WriteFile writes data to the file p of this machine, creating its parent
// directories.
func WriteFile(t testing.TB, p, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// PlantTempFile writes a temporary file, as an interrupted write leaves it,
// in the directory dir of a store whose root is the directory root of this
// machine, and returns its store path: the PlantTemp of such adapters.
func PlantTempFile(t testing.TB, root, dir string) string {
	t.Helper()
	name := storage.TempPrefix + rand.Text()
	WriteFile(t, filepath.Join(root, filepath.FromSlash(dir), name), "partial")
	return path.Join(dir, name)
}
