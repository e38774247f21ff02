//go:build unix

package local_test

import (
	"errors"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/local"
	"github.com/distributor-dev/distributor/internal/storage/storagetest"
)

// snapshot records every entry below dir (without following symbolic
// links): its type, mode and, for regular files, content.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		v := fi.Mode().String()
		if fi.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			v += " " + string(b)
		}
		m[p] = v
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

func TestSymlinksNeverLeadOutsideTheRoot(t *testing.T) {
	root, outside := symlinkedRoot(t)
	before := snapshot(t, outside)
	s := newStore(t, root)
	symlinkParentsRefused(t, s, root)
	symlinksListedNotFollowed(t, s)
	finalSymlinkSegments(t, s, root)
	if after := snapshot(t, outside); !maps.Equal(before, after) {
		t.Errorf("the directory outside the root changed:\nbefore %q\n after %q", before, after)
	}
}

// symlinkedRoot makes a root beside a directory outside it, with symbolic
// links in the root to outside (absolute, relative, nested), to inside the
// root, to a file outside, and dangling ones.
func symlinkedRoot(t *testing.T) (root, outside string) {
	base := t.TempDir()
	root, outside = filepath.Join(base, "root"), filepath.Join(base, "outside")
	storagetest.WriteFile(t, filepath.Join(outside, "secret"), "top secret")
	storagetest.WriteFile(t, filepath.Join(outside, "sub", "file"), "sub file")
	storagetest.WriteFile(t, filepath.Join(outside, storage.TempPrefix+"not-ours"), "not ours")
	storagetest.WriteFile(t, filepath.Join(root, "real", "f"), "real f")
	symlink(t, outside, filepath.Join(root, "out"))              // absolute
	symlink(t, "../outside", filepath.Join(root, "rel"))         // relative
	symlink(t, "../../outside", filepath.Join(root, "d", "out")) // nested
	symlink(t, "real", filepath.Join(root, "in"))                // inside the root
	symlink(t, filepath.Join(outside, "secret"), filepath.Join(root, "secretlink"))
	symlink(t, filepath.Join(outside, "secret"), filepath.Join(root, "secretlink2"))
	symlink(t, filepath.Join(outside, "secret"), filepath.Join(root, "secretlink3"))
	symlink(t, filepath.Join(outside, "not-yet"), filepath.Join(root, "dangling"))
	symlink(t, filepath.Join(outside, "not-yet2"), filepath.Join(root, "dangling2"))
	return root, outside
}

// symlinkParentsRefused: paths through a symbolic link parent are refused
// for writes, missing for reads and deletes.
func symlinkParentsRefused(t *testing.T, s *local.Store, root string) {
	ctx := t.Context()
	for _, p := range []string{
		"out/x", "out/secret", "out/sub/file", "out/new/deep/x", "out/" + storage.TempPrefix[:5],
		"rel/x", "rel/secret", "d/out/secret", "d/out/x", "in/g", "in/f",
	} {
		if _, err := s.Put(ctx, p, strings.NewReader("pwned"), 5, storage.PutOptions{}); !errors.Is(err, storage.ErrInvalidPath) {
			t.Errorf("Put(%q): got %v, want ErrInvalidPath", p, err)
		}
		if _, err := storage.PutIf(ctx, s, p, []byte("pwned"), ""); !errors.Is(err, storage.ErrInvalidPath) {
			t.Errorf("PutIf(%q, create): got %v, want ErrInvalidPath", p, err)
		}
		if _, err := storage.PutIf(ctx, s, p, []byte("pwned"), "sha256:x"); err == nil {
			t.Errorf("PutIf(%q, version) succeeded", p)
		}
		if r, err := s.Open(ctx, p); !errors.Is(err, storage.ErrNotExist) {
			if err == nil {
				r.Close()
			}
			t.Errorf("Open(%q): got %v, want ErrNotExist", p, err)
		}
		if _, _, err := s.Get(ctx, p); !errors.Is(err, storage.ErrNotExist) {
			t.Errorf("Get(%q): got %v, want ErrNotExist", p, err)
		}
		if _, err := s.Stat(ctx, p); !errors.Is(err, storage.ErrNotExist) {
			t.Errorf("Stat(%q): got %v, want ErrNotExist", p, err)
		}
		if _, err := s.Put(ctx, p, strings.NewReader("pwned"), 5, storage.IfVersion("")); !errors.Is(err, storage.ErrInvalidPath) {
			t.Errorf("PutIfStream(%q, create): got %v, want ErrInvalidPath", p, err)
		}
		if _, err := s.ReadVersioned(ctx, p, func(io.Reader) error { return errors.New("fn called") }); !errors.Is(err, storage.ErrNotExist) {
			t.Errorf("ReadVersioned(%q): got %v, want ErrNotExist", p, err)
		}
		if err := s.Delete(ctx, p); err != nil {
			t.Errorf("Delete(%q): %v", p, err)
		}
	}
	if exists(filepath.Join(root, "real", "g")) {
		t.Error("Put through an inside symlink wrote real/g")
	}
	if !exists(filepath.Join(root, "real", "f")) {
		t.Error("Delete through an inside symlink removed real/f")
	}
}

// symlinksListedNotFollowed: List never follows a symbolic link: it
// reports each as an entry that is not an object; nor does SweepTemp.
func symlinksListedNotFollowed(t *testing.T, s *local.Store) {
	ctx := t.Context()
	wantList(t, s, "", "d/out/", "dangling/", "dangling2/", "in/", "out/", "real/f", "rel/", "secretlink/", "secretlink2/", "secretlink3/")
	wantList(t, s, "out/")
	wantList(t, s, "in/")
	for _, opts := range []storage.SweepOptions{
		{},
		{Dirs: []string{"out", "rel", "d/out", "in", "out/sub", "secretlink"}},
		{Dirs: []string{"out"}, DryRun: true},
	} {
		if found, err := s.SweepTemp(ctx, opts); len(found) != 0 || err != nil {
			t.Errorf("SweepTemp(%+v) = %q, %v; want nothing", opts, found, err)
		}
	}
}

// finalSymlinkSegments: a symbolic link as the final segment is not an
// object, but its name is taken for an exclusive create, Put replaces the
// link itself, and Delete removes the link, not its target.
func finalSymlinkSegments(t *testing.T, s *local.Store, root string) {
	ctx := t.Context()
	// A symbolic link as the final segment is not an object...
	for _, p := range []string{"secretlink", "dangling", "out", "in"} {
		if _, err := s.Stat(ctx, p); !errors.Is(err, storage.ErrNotExist) {
			t.Errorf("Stat(%q): got %v, want ErrNotExist", p, err)
		}
		if _, _, err := s.Get(ctx, p); !errors.Is(err, storage.ErrNotExist) {
			t.Errorf("Get(%q): got %v, want ErrNotExist", p, err)
		}
	}
	// ...but its name is taken for an exclusive create...
	for _, p := range []string{"secretlink2", "dangling2"} {
		if _, err := storage.PutIf(ctx, s, p, []byte("pwned"), ""); !errors.Is(err, storage.ErrPrecondition) {
			t.Errorf("PutIf(%q, create): got %v, want ErrPrecondition", p, err)
		}
	}
	// ...Put replaces the link itself...
	for _, p := range []string{"secretlink", "dangling"} {
		if _, err := s.Put(ctx, p, strings.NewReader("replaced"), 8, storage.PutOptions{}); err != nil {
			t.Errorf("Put(%q): %v", p, err)
		}
		fi, err := os.Lstat(filepath.Join(root, p))
		if err != nil || !fi.Mode().IsRegular() {
			t.Errorf("%s after Put: %v, %v; want a regular file", p, fi, err)
		}
	}
	// ...and Delete removes the link, not its target.
	if err := s.Delete(ctx, "secretlink3"); err != nil {
		t.Errorf("Delete(secretlink3): %v", err)
	}
	if exists(filepath.Join(root, "secretlink3")) {
		t.Error("Delete left the symbolic link")
	}
}

// TestSymlinkedRootIsResolved: the configured root may itself be (or pass
// through) a symbolic link; only links inside it are refused.
func TestSymlinkedRootIsResolved(t *testing.T) {
	base := t.TempDir()
	real := filepath.Join(base, "real")
	if err := os.Mkdir(real, 0o755); err != nil {
		t.Fatal(err)
	}
	symlink(t, real, filepath.Join(base, "link"))
	s := newStore(t, filepath.Join(base, "link"))
	put(t, s, "a/b", "x")
	if got, _ := os.ReadFile(filepath.Join(real, "a", "b")); string(got) != "x" {
		t.Errorf("real/a/b = %q", got)
	}
}

func TestModesIgnoreUmask(t *testing.T) {
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	root := t.TempDir()
	s := newStore(t, root)
	put(t, s, "dir/sub/put", "x")
	if _, err := storage.PutIf(t.Context(), s, "dir/other/putif", []byte("x"), ""); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]fs.FileMode{
		"dir":             fs.ModeDir | 0o755,
		"dir/sub":         fs.ModeDir | 0o755,
		"dir/sub/put":     0o644,
		"dir/other":       fs.ModeDir | 0o755,
		"dir/other/putif": 0o644,
	} {
		fi, err := os.Lstat(filepath.Join(root, p))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode() != want {
			t.Errorf("%s: mode %v, want %v", p, fi.Mode(), want)
		}
	}
}

func TestSpecialFilesAreNotObjects(t *testing.T) {
	ctx := t.Context()
	root := t.TempDir()
	s := newStore(t, root)
	if err := syscall.Mkfifo(filepath.Join(root, "fifo"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := s.Open(ctx, "fifo") // must not block on the FIFO
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, storage.ErrNotExist) {
			t.Errorf("Open(fifo): got %v, want ErrNotExist", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Open(fifo) blocked")
	}
	// Nor does ReadVersioned block, or call fn.
	go func() {
		_, err := s.ReadVersioned(ctx, "fifo", func(io.Reader) error { return errors.New("fn called") })
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, storage.ErrNotObject) || !errors.Is(err, storage.ErrNotExist) {
			t.Errorf("ReadVersioned(fifo): got %v, want ErrNotObject and ErrNotExist", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("ReadVersioned(fifo) blocked")
	}
	wantList(t, s, "", "fifo/") // not an object, but it takes the path
}

func TestListReportsUnaddressableNames(t *testing.T) {
	root := t.TempDir()
	s := newStore(t, root)
	storagetest.WriteFile(t, filepath.Join(root, `back\slash`), "x")
	wantList(t, s, "", `back\slash`)
	if _, err := s.Stat(t.Context(), `back\slash`); !errors.Is(err, storage.ErrInvalidPath) {
		t.Errorf("Stat: got %v, want ErrInvalidPath", err)
	}
}

// TestStagedWritesIgnoreUmask: staged files get 0644 and their new
// directories 0755 whatever the umask (the temporary file is created
// with openat(2) directly on Linux, and chmodded only when the umask
// would clear one of 0644's bits).
func TestStagedWritesIgnoreUmask(t *testing.T) {
	for _, mask := range []int{0o022, 0o077, 0o000} {
		old := syscall.Umask(mask)
		root := t.TempDir()
		s := newStore(t, root)
		commit(t, stage(t, s, "dir/sub/a", "x"))
		commit(t, stage(t, s, "dir/sub/b", "y"))
		commit(t, stage(t, s, "top", "z"))
		syscall.Umask(old)
		for p, want := range map[string]fs.FileMode{
			"dir": fs.ModeDir | 0o755, "dir/sub": fs.ModeDir | 0o755,
			"dir/sub/a": 0o644, "dir/sub/b": 0o644, "top": 0o644,
		} {
			fi, err := os.Lstat(filepath.Join(root, p))
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode() != want {
				t.Errorf("umask %#o: %s: mode %v, want %v", mask, p, fi.Mode(), want)
			}
		}
	}
}
