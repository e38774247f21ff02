package bundle

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// TestOpenKeepsDirectoriesButRechecksThem: a loaded bundle keeps its
// directories open between Open calls (see fileOpener), yet each Open
// still finds the entries at their paths now: a directory replaced by
// another real directory since an earlier Open serves the new one's file
// (which must match the manifest), and after Close files still open.
func TestOpenKeepsDirectoriesButRechecksThem(t *testing.T) {
	dir := newBundle(t, sample)
	b, err := Load(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	read := func(p string) string {
		t.Helper()
		r, err := b.OpenVerified(p)
		if err != nil {
			t.Fatalf("OpenVerified(%s): %v", p, err)
		}
		defer r.Close()
		data, err := io.ReadAll(r)
		if err != nil {
			t.Fatalf("read %s: %v", p, err)
		}
		return string(data)
	}
	if got := read("a/b/c.txt"); got != "deep" {
		t.Fatalf("a/b/c.txt = %q", got)
	}
	// Replace a/b with another directory holding different bytes of the
	// same size: the next open reads the new file, so verification fails.
	if err := os.Rename(filepath.Join(dir, "a", "b"), filepath.Join(dir, "a", "old")); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, dir, map[string]string{"a/b/c.txt": "DEEP"})
	r, err := b.OpenVerified("a/b/c.txt")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadAll(r); err == nil {
		t.Error("read the replaced directory's file without a mismatch: the old directory was used")
	}
	r.Close()
	// Back to the right bytes.
	writeFiles(t, dir, map[string]string{"a/b/c.txt": "deep"})
	if got := read("a/b/c.txt"); got != "deep" {
		t.Fatalf("a/b/c.txt = %q", got)
	}
	b.Close()
	if got := read("img/x.png"); got != "PNG" {
		t.Fatalf("after Close: img/x.png = %q", got)
	}
}
