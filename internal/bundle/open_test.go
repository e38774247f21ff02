package bundle

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
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

// TestWalkBundleFastMatchesWalk: the descriptor walk a load uses on Linux
// finds the same unlisted files and sizes as the os.Root walk, with
// symbolic links, nested manifests, special files and unreadable
// directories in the tree.
func TestWalkBundleFastMatchesWalk(t *testing.T) {
	dir := newBundle(t, sample)
	writeFiles(t, dir, map[string]string{"extra.txt": "e", "a/b/more.txt": "m", "sub/manifest.json": "{}", "locked/x": "x"})
	symlink(t, "report.md", filepath.Join(dir, "link.md"))
	symlink(t, "a", filepath.Join(dir, "dirlink"))
	if err := os.Chmod(filepath.Join(dir, "locked"), 0); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(filepath.Join(dir, "locked"), 0o755)
	m := &Manifest{}
	for p, content := range sample {
		m.Files = append(m.Files, File{Path: p, Size: int64(len(content))})
	}
	m.Files = append(m.Files, File{Path: "link.md"}, File{Path: "sub/manifest.json"})
	slices.SortFunc(m.Files, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
	fastUnlisted, fastSizes, ok, err := walkBundleFast(context.Background(), dir, m)
	if !ok {
		t.Skip("no descriptor walk on this platform")
	}
	if err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	unlisted, sizes, err := walkBundle(context.Background(), root, m)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(unlisted, fastUnlisted); diff != "" {
		t.Errorf("unlisted differ (-walk +fast):\n%s", diff)
	}
	if diff := cmp.Diff(sizes, fastSizes); diff != "" {
		t.Errorf("sizes differ (-walk +fast):\n%s", diff)
	}
	if _, ok := fastSizes["sub/manifest.json"]; !ok {
		t.Error("a nested manifest.json is a bundle file like any other")
	}
}

// TestCopiedByVerifiesTheCopy: a reader whose file a writer copied by other
// means (CopiedBy) verifies the copy's bytes, not the file's: a copy that
// differs fails with a *MismatchError though the file is intact, and a
// rewind verifies the file again.
func TestCopiedByVerifiesTheCopy(t *testing.T) {
	b, err := Load(context.Background(), newBundle(t, sample))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	r, err := b.OpenVerified("a/b/c.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	v := r.(interface {
		io.ReadSeeker
		CopiedBy(io.Reader) *os.File
	})
	if f := v.CopiedBy(strings.NewReader("DEEP")); f == nil {
		t.Fatal("CopiedBy returned no file")
	}
	var mm *MismatchError
	if _, err := io.ReadAll(v); !errors.As(err, &mm) || !strings.Contains(mm.Reason, "sha256 mismatch") {
		t.Errorf("a copy that differs: got %v, want a sha256 mismatch", err)
	}
	if _, err := v.Seek(0, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	if got, err := io.ReadAll(v); err != nil || string(got) != "deep" {
		t.Errorf("after a rewind: %q, %v; want the file's bytes", got, err)
	}
}
