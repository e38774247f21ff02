package local_test

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/local"
	"github.com/distributor-dev/distributor/internal/storage/storagetest"
)

func TestConformance(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) storage.Store {
		return newStore(t, t.TempDir())
	}, storagetest.WithPlantTemp(plantTemp), tempCreate, makeDir)
}

// TestConformanceDeferred runs the suite on the store production opens for
// local destinations.
func TestConformanceDeferred(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) storage.Store {
		s, err := local.NewDeferred(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}, storagetest.WithPlantTemp(plantTemp), tempCreate, makeDir)
}

// plantTemp writes a temporary file, as a crashed write leaves it, in the
// directory dir of the local store s (whose String is its root).
func plantTemp(t *testing.T, s storage.Store, dir string) string {
	return storagetest.PlantTempFile(t, s.String(), dir)
}

// makeDir makes an empty directory in the root of the local store s, as
// an operator does.
var makeDir = storagetest.WithMakeDir(func(t *testing.T, s storage.Store, dir string) {
	if err := os.MkdirAll(filepath.Join(s.String(), filepath.FromSlash(dir)), 0o755); err != nil {
		t.Fatal(err)
	}
})

// tempCreate lets the suite race exclusive creates against sweeps: a
// second store on the root is another process, a create takes about a
// hundred microseconds.
var tempCreate = storagetest.WithTempCreate(storagetest.TempCreate{
	Reopen:     func(t *testing.T, s storage.Store) storage.Store { return newStore(t, s.String()) },
	Dir:        func(s storage.Store) string { return s.String() },
	Races:      200,
	RaceSpread: 250 * time.Microsecond,
})

func newStore(t testing.TB, root string) *local.Store {
	t.Helper()
	s, err := local.New(root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func put(t testing.TB, s *local.Store, p, data string) {
	t.Helper()
	if _, err := s.Put(t.Context(), p, strings.NewReader(data), int64(len(data)), storage.PutOptions{}); err != nil {
		t.Fatalf("Put(%q): %v", p, err)
	}
}

func list(t *testing.T, s *local.Store, prefix string) []string {
	t.Helper()
	var ps []string
	if err := s.List(t.Context(), prefix, func(i storage.Info) error {
		ps = append(ps, i.Path)
		return nil
	}); err != nil {
		t.Fatalf("List(%q): %v", prefix, err)
	}
	return ps
}

func wantList(t *testing.T, s *local.Store, prefix string, want ...string) {
	t.Helper()
	if got := list(t, s, prefix); !slices.Equal(got, want) {
		t.Errorf("List(%q):\n got %q\nwant %q", prefix, got, want)
	}
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// tempFiles returns the temporary files anywhere below dir, on disk.
func tempFiles(t *testing.T, dir string) []string {
	t.Helper()
	var found []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if storage.IsTemp(p) {
			found = append(found, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

func TestNewRejectsRelativeRoot(t *testing.T) {
	for _, root := range []string{"", "rel", "./rel", "../rel"} {
		if s, err := local.New(root); err == nil {
			s.Close()
			t.Errorf("New(%q) succeeded", root)
		}
	}
}

func TestNewRootIsFile(t *testing.T) {
	f := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(f, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if s, err := local.New(f); err == nil {
		s.Close()
		t.Error("New on a regular file succeeded")
	}
}

func TestMissingRootReadsEmptyAndIsCreatedByFirstWrite(t *testing.T) {
	ctx := t.Context()
	root := filepath.Join(t.TempDir(), "new", "root")
	s := newStore(t, root+"/") // cleaned
	if s.String() != root {
		t.Errorf("String() = %q, want %q", s.String(), root)
	}
	wantList(t, s, "")
	if _, err := s.Stat(ctx, "x"); !errors.Is(err, storage.ErrNotExist) {
		t.Errorf("Stat: got %v, want ErrNotExist", err)
	}
	if _, _, err := s.Get(ctx, "x"); !errors.Is(err, storage.ErrNotExist) {
		t.Errorf("Get: got %v, want ErrNotExist", err)
	}
	if err := s.Delete(ctx, "x"); err != nil {
		t.Errorf("Delete: %v", err)
	}
	if found, err := s.SweepTemp(ctx, storage.SweepOptions{}); len(found) != 0 || err != nil {
		t.Errorf("SweepTemp = %q, %v", found, err)
	}
	if found, err := s.SweepTemp(ctx, storage.SweepOptions{Dirs: []string{"", "a"}}); len(found) != 0 || err != nil {
		t.Errorf("SweepTemp(Dirs) = %q, %v", found, err)
	}
	if _, err := storage.PutIf(ctx, s, "x", []byte("x"), "sha256:00"); !errors.Is(err, storage.ErrPrecondition) {
		t.Errorf("PutIf(version): got %v, want ErrPrecondition", err)
	}
	if exists(filepath.Dir(root)) {
		t.Fatal("reads created the root")
	}
	put(t, s, "a/b", "first")
	got, err := os.ReadFile(filepath.Join(root, "a", "b"))
	if err != nil || string(got) != "first" {
		t.Fatalf("file on disk: %q, %v", got, err)
	}
}

func TestClose(t *testing.T) {
	s, err := local.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	put(t, s, "x", "x")
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := s.Put(t.Context(), "y", strings.NewReader("y"), 1, storage.PutOptions{}); !errors.Is(err, os.ErrClosed) {
		t.Errorf("Put after Close: got %v, want os.ErrClosed", err)
	}
	if _, err := s.Stat(t.Context(), "x"); !errors.Is(err, os.ErrClosed) {
		t.Errorf("Stat after Close: got %v, want os.ErrClosed", err)
	}
}

func TestErrorsNameRootOperationAndPath(t *testing.T) {
	root := t.TempDir()
	s := newStore(t, root)
	_, err := s.Stat(t.Context(), "dir/missing.txt")
	if err == nil || !strings.Contains(err.Error(), "local "+root+": stat dir/missing.txt: ") {
		t.Errorf("error %q does not name the root, operation and path", err)
	}
}

func TestTempFilesHiddenAndSwept(t *testing.T) {
	ctx := t.Context()
	root := t.TempDir()
	s := newStore(t, root)
	put(t, s, "d/a", "a")
	// What a crash in the middle of writes leaves behind.
	for _, p := range []string{
		storage.TempPrefix + "crash1",
		"d/" + storage.TempPrefix + "crash2",
		"e/f/" + storage.TempPrefix + "crash3",
	} {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte("partial"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(root, "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	// An empty directory is listed as one (a trailing slash); one that holds
	// only a temporary file is not empty, and lists nothing.
	wantList(t, s, "", "d/a", "empty/")
	wantList(t, s, storage.TempPrefix[:5])

	// Temporary names are not addressable.
	tmp := "d/" + storage.TempPrefix + "crash2"
	if _, err := s.Stat(ctx, tmp); !errors.Is(err, storage.ErrInvalidPath) {
		t.Errorf("Stat(%q): got %v, want ErrInvalidPath", tmp, err)
	}
	if err := s.Delete(ctx, tmp); !errors.Is(err, storage.ErrInvalidPath) {
		t.Errorf("Delete(%q): got %v, want ErrInvalidPath", tmp, err)
	}
	if _, err := s.Put(ctx, tmp, strings.NewReader(""), 0, storage.PutOptions{}); !errors.Is(err, storage.ErrInvalidPath) {
		t.Errorf("Put(%q): got %v, want ErrInvalidPath", tmp, err)
	}

	all := []string{storage.TempPrefix + "crash1", "d/" + storage.TempPrefix + "crash2", "e/f/" + storage.TempPrefix + "crash3"}
	// A dry run reports and removes nothing, not even a directory.
	found, err := s.SweepTemp(ctx, storage.SweepOptions{DryRun: true})
	if err != nil || !slices.Equal(found, all) {
		t.Fatalf("SweepTemp(DryRun) = %q, %v; want %q", found, err, all)
	}
	if left := tempFiles(t, root); len(left) != 3 {
		t.Errorf("a dry run removed temporary files: %q left", left)
	}
	found, err = s.SweepTemp(ctx, storage.SweepOptions{})
	if err != nil || !slices.Equal(found, all) {
		t.Fatalf("SweepTemp = %q, %v; want %q", found, err, all)
	}
	if left := tempFiles(t, root); len(left) > 0 {
		t.Errorf("temporary files left: %q", left)
	}
	if exists(filepath.Join(root, "e")) {
		t.Error("SweepTemp left the directories it emptied")
	}
	if !exists(filepath.Join(root, "empty")) || !exists(filepath.Join(root, "d", "a")) {
		t.Error("SweepTemp removed something that was not temporary")
	}
	if found, err := s.SweepTemp(ctx, storage.SweepOptions{}); len(found) != 0 || err != nil {
		t.Errorf("second SweepTemp = %q, %v; want nothing", found, err)
	}
}

// TestSweepTempDirsPrunes: sweeping given directories removes those left
// empty and their parents left empty, never the root, never a directory
// that was empty before, and never descends.
func TestSweepTempDirsPrunes(t *testing.T) {
	ctx := t.Context()
	root := t.TempDir()
	s := newStore(t, root)
	put(t, s, "keep/obj", "x")
	for _, p := range []string{"", "a/b/c", "a/b/c/deeper", "keep", "empty"} {
		if err := os.MkdirAll(filepath.Join(root, filepath.FromSlash(p)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	tmp := map[string]string{}
	for _, dir := range []string{"", "a/b", "a/b/c/deeper", "keep"} {
		tmp[dir] = plantTemp(t, s, dir)
	}
	// A directory holding only a temporary directory: a name no write uses,
	// never removed by a sweep of its parent (it is not a file).
	if err := os.Mkdir(filepath.Join(root, "a", storage.TempPrefix+"dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	dirs := []string{"a/b", "keep", "empty", "a"}
	found, err := s.SweepTemp(ctx, storage.SweepOptions{Dirs: dirs})
	if want := []string{tmp["a/b"], tmp["keep"]}; err != nil || !slices.Equal(found, want) {
		t.Fatalf("SweepTemp(%q) = %q, %v; want %q", dirs, found, err, want)
	}
	for _, p := range []string{
		"a/b/c/deeper/" + path.Base(tmp["a/b/c/deeper"]), // not recursive
		"a/b", // not empty: holds c
		"keep/obj",
		"empty", // empty before
		tmp[""],
		"a/" + storage.TempPrefix + "dir",
	} {
		if !exists(filepath.Join(root, filepath.FromSlash(p))) {
			t.Errorf("%s was removed", p)
		}
	}
	// Sweeping the deepest directory prunes it and its empty parents, up to
	// the first one that is not empty.
	found, err = s.SweepTemp(ctx, storage.SweepOptions{Dirs: []string{"a/b/c/deeper"}})
	if want := []string{tmp["a/b/c/deeper"]}; err != nil || !slices.Equal(found, want) {
		t.Fatalf("SweepTemp = %q, %v; want %q", found, err, want)
	}
	if exists(filepath.Join(root, "a", "b")) || !exists(filepath.Join(root, "a")) {
		t.Error("a/b was not pruned, or a (holding a temporary directory) was")
	}
	found, err = s.SweepTemp(ctx, storage.SweepOptions{Dirs: []string{""}})
	if want := []string{tmp[""]}; err != nil || !slices.Equal(found, want) {
		t.Fatalf("SweepTemp(root) = %q, %v; want %q", found, err, want)
	}
	if !exists(root) || !exists(filepath.Join(root, "empty")) {
		t.Error("SweepTemp removed the root or a directory that was empty before")
	}
}

// errReader fails after yielding n bytes.
type errReader struct{ n int }

func (r *errReader) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, errors.New("boom")
	}
	k := min(len(p), r.n)
	clear(p[:k])
	r.n -= k
	return k, nil
}

func TestFailedWritesLeaveNoTempFiles(t *testing.T) {
	ctx := t.Context()
	root := t.TempDir()
	s := newStore(t, root)
	put(t, s, "a/old", "old")
	v, err := storage.PutIf(ctx, s, "a/lock", []byte("v1"), "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put(ctx, "a/old", &errReader{n: 3 << 20}, 4<<20, storage.PutOptions{}); err == nil {
		t.Error("Put with a failing reader succeeded")
	}
	if _, err := s.Put(ctx, "a/new", strings.NewReader("short"), 10, storage.PutOptions{}); err == nil {
		t.Error("short Put succeeded")
	}
	if _, err := storage.PutIf(ctx, s, "a/lock", []byte("v2"), ""); !errors.Is(err, storage.ErrPrecondition) {
		t.Errorf("PutIf create of an existing object: %v", err)
	}
	if _, err := storage.PutIf(ctx, s, "a/lock", []byte("v2"), "sha256:stale"); !errors.Is(err, storage.ErrPrecondition) {
		t.Errorf("PutIf with a stale version: %v", err)
	}
	if _, err := storage.PutIf(ctx, s, "a/lock", []byte("v2"), v); err != nil {
		t.Errorf("PutIf with the current version: %v", err)
	}
	if left := tempFiles(t, root); len(left) > 0 {
		t.Errorf("temporary files left: %q", left)
	}
	// A failed Put removes the directories it created, not others.
	if err := os.Mkdir(filepath.Join(root, "keep"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put(ctx, "keep/new/dirs/f", strings.NewReader("short"), 10, storage.PutOptions{}); err == nil {
		t.Error("short Put succeeded")
	}
	if exists(filepath.Join(root, "keep", "new")) || !exists(filepath.Join(root, "keep")) {
		t.Error("a failed Put left the directories it created, or removed one it did not")
	}
	// A conditional write that fails leaves no new directory either.
	if _, err := storage.PutIf(ctx, s, "b/c/lock", []byte("x"), v); !errors.Is(err, storage.ErrPrecondition) {
		t.Errorf("PutIf(version) of an absent object: %v", err)
	}
	if exists(filepath.Join(root, "b")) {
		t.Error("a failed PutIf created a directory")
	}
}

func TestVersionIsContentDigest(t *testing.T) {
	s := newStore(t, t.TempDir())
	v, err := storage.PutIf(t.Context(), s, "x", []byte("hello"), "")
	if err != nil {
		t.Fatal(err)
	}
	const want = "sha256:2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"
	if v != want {
		t.Errorf("version = %q, want %q", v, want)
	}
}

func TestDeletePrunesEmptyDirectories(t *testing.T) {
	ctx := t.Context()
	root := t.TempDir()
	s := newStore(t, root)
	put(t, s, "a/b/c/f", "f")
	put(t, s, "a/g", "g")
	put(t, s, "top", "t")
	if err := s.Delete(ctx, "a/b/c/f"); err != nil {
		t.Fatal(err)
	}
	if exists(filepath.Join(root, "a", "b")) {
		t.Error("a/b was left empty")
	}
	if !exists(filepath.Join(root, "a", "g")) {
		t.Error("a/g is gone")
	}
	for _, p := range []string{"a/g", "top"} {
		if err := s.Delete(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatalf("the root itself was removed: %v", err)
	}
	if len(entries) != 0 {
		t.Errorf("root not empty: %v", entries)
	}
	// The freed name can now be a file.
	put(t, s, "a", "now a file")
}

// TestDeletePrunesOnlyWhatItMayRemove: a store's Delete removes the
// directories it empties of files an earlier store (an earlier run)
// wrote, as a successful prune does, but stops at a directory that was
// there when this store wrote below it, as a rollback of this store's own
// file does.
func TestDeletePrunesOnlyWhatItMayRemove(t *testing.T) {
	ctx := t.Context()
	root := t.TempDir()
	earlier := newStore(t, root)
	put(t, earlier, "old/sub/x", "x")
	put(t, earlier, "old/y", "y")
	earlier.Close()
	s := newStore(t, root)
	put(t, s, "old/new/z", "z") // old is found, old/new made
	for _, p := range []string{"old/sub/x", "old/y", "old/new/z"} {
		if err := s.Delete(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	if got := storagetest.DirEntries(t, root); !slices.Equal(got, []string{"old"}) {
		t.Errorf("after the deletes: %q, want just old (there before this store wrote below it)", got)
	}
}

func TestDeleteDirectoryIsNoop(t *testing.T) {
	root := t.TempDir()
	s := newStore(t, root)
	put(t, s, "d/f", "f")
	if err := s.Delete(t.Context(), "d"); err != nil {
		t.Errorf("Delete of a directory: %v", err)
	}
	if !exists(filepath.Join(root, "d", "f")) {
		t.Error("Delete of a directory removed its content")
	}
}

func TestPutOverDirectoryOrBelowFileFails(t *testing.T) {
	ctx := t.Context()
	root := t.TempDir()
	s := newStore(t, root)
	put(t, s, "d/x", "x")
	if _, err := s.Put(ctx, "d", strings.NewReader("y"), 1, storage.PutOptions{}); err == nil {
		t.Error("Put over a directory succeeded")
	}
	if _, err := storage.PutIf(ctx, s, "d", []byte("y"), ""); !errors.Is(err, storage.ErrPrecondition) {
		t.Errorf("PutIf create over a directory: got %v, want ErrPrecondition", err)
	}
	_, err := s.Put(ctx, "d/x/below", strings.NewReader("y"), 1, storage.PutOptions{})
	if err == nil {
		t.Error("Put below a file succeeded")
	} else if errors.Is(err, storage.ErrInvalidPath) {
		t.Errorf("Put below a file: %v should not be ErrInvalidPath", err)
	}
	if got, _ := os.ReadFile(filepath.Join(root, "d", "x")); string(got) != "x" {
		t.Errorf("d/x = %q", got)
	}
	if left := tempFiles(t, root); len(left) > 0 {
		t.Errorf("temporary files left: %q", left)
	}
}

// TestConcurrentPutAndDeleteInOneDirectory races Delete's pruning of empty
// directories against Put's creation of them.
func TestConcurrentPutAndDeleteInOneDirectory(t *testing.T) {
	ctx := t.Context()
	s := newStore(t, t.TempDir())
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			p := fmt.Sprintf("shared/deep/%d", w)
			for i := range 30 {
				data := fmt.Sprint(i)
				if _, err := s.Put(ctx, p, strings.NewReader(data), int64(len(data)), storage.PutOptions{}); err != nil {
					t.Errorf("Put(%q): %v", p, err)
					return
				}
				if err := s.Delete(ctx, p); err != nil {
					t.Errorf("Delete(%q): %v", p, err)
					return
				}
			}
		})
	}
	wg.Wait()
	wantList(t, s, "")
}

// TestListSkipsDirectoriesAndHandlesDeepTrees: directories are not objects;
// only an empty one below the listed prefix is reported (with a trailing
// slash: storage.Info.Dir), never the prefix's own directory.
func TestListSkipsDirectoriesAndHandlesDeepTrees(t *testing.T) {
	root := t.TempDir()
	s := newStore(t, root)
	if err := os.MkdirAll(filepath.Join(root, "only", "dirs", "here"), 0o755); err != nil {
		t.Fatal(err)
	}
	deep := strings.Repeat("d/", 30) + "leaf"
	put(t, s, deep, "x")
	wantList(t, s, "", deep, "only/dirs/here/")
	wantList(t, s, "d/d/", deep)
	wantList(t, s, "only/", "only/dirs/here/")
	wantList(t, s, "only/dirs/here/")
}

func BenchmarkPut(b *testing.B) {
	for _, size := range []int{4 << 10, 1 << 20} {
		b.Run(fmt.Sprintf("%dKiB", size>>10), func(b *testing.B) {
			s := newStore(b, b.TempDir())
			data := bytes.Repeat([]byte{'x'}, size)
			b.SetBytes(int64(size))
			for b.Loop() {
				if _, err := s.Put(b.Context(), "bench/dir/obj", bytes.NewReader(data), int64(size), storage.PutOptions{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
