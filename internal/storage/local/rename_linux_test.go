package local

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// TestRenameNoReplace: the exclusive rename publishes a free name in one
// call and refuses any entry at the name (a file, a directory, a dangling
// symbolic link) with an error matching fs.ErrExist, leaving both names as
// they were; a vanished source is fs.ErrNotExist. Without those two
// distinctions a create would be taken for a success or a failed
// condition for a vanished temporary file.
func TestRenameNoReplace(t *testing.T) {
	dir := t.TempDir()
	d, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	fd := int(d.Fd())
	write := func(name, data string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("tmp", "new")
	if err := renameNoReplace(fd, "tmp", "free"); errors.Is(err, errors.ErrUnsupported) {
		t.Skipf("this file system has no RENAME_NOREPLACE: %v", err)
	} else if err != nil {
		t.Fatalf("rename onto a free name: %v", err)
	}
	if data, err := os.ReadFile(filepath.Join(dir, "free")); err != nil || string(data) != "new" {
		t.Fatalf("free after the rename: %q, %v", data, err)
	}
	write("file", "old")
	if err := os.Mkdir(filepath.Join(dir, "dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("nowhere", filepath.Join(dir, "dangling")); err != nil {
		t.Fatal(err)
	}
	for _, taken := range []string{"file", "dir", "dangling"} {
		write("tmp", "new")
		if err := renameNoReplace(fd, "tmp", taken); !errors.Is(err, fs.ErrExist) {
			t.Errorf("rename onto %s: %v, want fs.ErrExist", taken, err)
		}
		if _, err := os.Lstat(filepath.Join(dir, "tmp")); err != nil {
			t.Errorf("the source after a refused rename onto %s: %v", taken, err)
		}
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "file")); string(data) != "old" {
		t.Errorf("file after a refused rename: %q", data)
	}
	if err := renameNoReplace(fd, "gone", "other"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("rename of a missing source: %v, want fs.ErrNotExist", err)
	}
}
