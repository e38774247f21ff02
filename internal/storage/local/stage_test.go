package local_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/dirstore"
	"github.com/distributor-dev/distributor/internal/storage/local"
)

// stage stages data at p (a new name) on s and fails the test on error.
func stage(t *testing.T, s *local.Store, p, data string) storage.Staged {
	t.Helper()
	g, err := s.Stage(t.Context(), p, strings.NewReader(data), int64(len(data)), storage.PutOptions{Mode: storage.PutCreate})
	if err != nil {
		t.Fatalf("stage %s: %v", p, err)
	}
	return g
}

func commit(t *testing.T, g storage.Staged) {
	t.Helper()
	if err := g.Commit(t.Context()); err != nil {
		t.Fatalf("commit: %v", err)
	}
}

func readFile(t *testing.T, root, p string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(p)))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestStagedWritesAfterPrune: the directories staged writes keep open for
// the store's life are forgotten when the store removes a directory, so a
// later write into the same path makes it again (it does not write into
// the removed directory).
func TestStagedWritesAfterPrune(t *testing.T) {
	root := t.TempDir()
	s := newStore(t, root)
	commit(t, stage(t, s, "a/b/x", "1"))
	if err := s.Delete(t.Context(), "a/b/x"); err != nil { // prunes a/b and a
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(root, "a")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a was not pruned: %v", err)
	}
	commit(t, stage(t, s, "a/b/y", "2"))
	if got := readFile(t, root, "a/b/y"); got != "2" {
		t.Errorf("a/b/y = %q", got)
	}

	// An aborted stage that made the directories removes them; the next
	// stage makes them again.
	g := stage(t, s, "c/d/x", "3")
	if err := g.Abort(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(root, "c")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("c was not removed by the abort: %v", err)
	}
	commit(t, stage(t, s, "c/d/y", "4"))
	if got := readFile(t, root, "c/d/y"); got != "4" {
		t.Errorf("c/d/y = %q", got)
	}
}

// TestStagedCommitRechecksItsDirectory: a directory that someone else
// moves away (and replaces) between a stage and its commit is not
// published into: the commit checks that each cached directory is still
// the one at its path, walks the path again, finds no temporary file
// there and fails with dirstore.ErrTempVanished; nothing appears at the
// path, and the moved directory is not written to by later stages.
func TestStagedCommitRechecksItsDirectory(t *testing.T) {
	root := t.TempDir()
	s := newStore(t, root)
	commit(t, stage(t, s, "d/first", "0")) // d is cached now
	g := stage(t, s, "d/x", "1")
	if err := os.Rename(filepath.Join(root, "d"), filepath.Join(root, "moved")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(root, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	err := g.Commit(t.Context())
	if !errors.Is(err, dirstore.ErrTempVanished) {
		t.Fatalf("commit after the directory moved: %v, want ErrTempVanished", err)
	}
	if _, err := os.Lstat(filepath.Join(root, "d", "x")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("d/x exists after a failed commit: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(root, "moved", "x")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the commit published into the moved directory: %v", err)
	}
	commit(t, stage(t, s, "d/y", "2"))
	if got := readFile(t, root, "d/y"); got != "2" {
		t.Errorf("d/y = %q", got)
	}
	if _, err := os.Lstat(filepath.Join(root, "moved", "y")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a later stage wrote into the moved directory: %v", err)
	}

	// The same with a symbolic link planted in its place: refused, and
	// nothing is written through it.
	outside := t.TempDir()
	g = stage(t, s, "d/z", "3")
	if err := os.Rename(filepath.Join(root, "d"), filepath.Join(root, "moved2")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "d")); err != nil {
		t.Fatal(err)
	}
	if err := g.Commit(t.Context()); err == nil {
		t.Fatal("commit through a planted symbolic link succeeded")
	}
	if ents, _ := os.ReadDir(outside); len(ents) > 0 {
		t.Errorf("files written outside the root: %v", ents)
	}
	if _, err := s.Stage(t.Context(), "d/w", strings.NewReader("4"), 1, storage.PutOptions{Mode: storage.PutCreate}); err == nil {
		t.Error("a stage below a planted symbolic link succeeded")
	}
	if ents, _ := os.ReadDir(outside); len(ents) > 0 {
		t.Errorf("files written outside the root: %v", ents)
	}
}

// TestStageRechecksItsDirectory: a kept directory moved out of the root
// (with the rename permission that takes) between two stages does not
// receive the second stage's temporary file: the stage checks each kept
// directory is still at its path and walks the path again.
func TestStageRechecksItsDirectory(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "root")
	s := newStore(t, root)
	commit(t, stage(t, s, "d/first", "0")) // d is kept open now
	if err := os.Rename(filepath.Join(root, "d"), filepath.Join(base, "outside")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(root, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	commit(t, stage(t, s, "d/second", "1"))
	if got := readFile(t, root, "d/second"); got != "1" {
		t.Errorf("d/second = %q", got)
	}
	ents, err := os.ReadDir(filepath.Join(base, "outside"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.Name() != "first" {
			t.Errorf("written outside the root: %s", e.Name())
		}
	}
}

// TestStageLargeFileWithEarlyWriteback stages and commits, on a deferred
// store, a file of a few writeback chunks and a tail (its writer starts the
// write-out of every chunk as it goes): the bytes are the ones staged, and
// Sync still succeeds.
func TestStageLargeFileWithEarlyWriteback(t *testing.T) {
	root := t.TempDir()
	s, err := local.NewDeferred(root)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	data := strings.Repeat("0123456789abcdef", (20<<20)/16) + "tail"
	g := stage(t, s, "big/file.bin", data)
	commit(t, g)
	if err := s.Sync(t.Context()); err != nil {
		t.Fatalf("sync: %v", err)
	}
	if got := readFile(t, root, "big/file.bin"); got != data {
		t.Fatalf("file holds %d bytes, want the %d staged", len(got), len(data))
	}
}
