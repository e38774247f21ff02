package sftp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/distributor-dev/distributor/internal/storage"
	"github.com/distributor-dev/distributor/internal/storage/storagetest"
)

// leftovers returns every entry below the local directory root, as slash
// paths (nil for a missing root).
func leftovers(t *testing.T, root string) []string {
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

func writeFile(t *testing.T, p, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestSymlinkedParentNeverFollowed: a directory inside the root replaced by
// a symbolic link to a directory outside it, holding files of the same
// names. Nothing below the link is read, written or deleted, as on the
// local backend.
func TestSymlinkedParentNeverFollowed(t *testing.T) {
	servers(t, func(t *testing.T, opts Options) {
		ctx := t.Context()
		root, outside := opts.Root, t.TempDir()
		for name, data := range map[string]string{
			"x": "outside x", "sub/y": "outside y", "lock": "outside lock",
			storage.TempPrefix + "not-ours": "not ours", "sub/" + storage.TempPrefix + "not-ours": "not ours",
		} {
			writeFile(t, filepath.Join(outside, name), data)
		}
		// The directories first exist, written through a store...
		first := open(t, opts)
		for _, p := range []string{"d0/x", "d0/sub/y", "d0/lock", "d1/x", "file"} {
			put(t, first, p, "inside "+p)
		}
		first.Close()
		// ...then someone replaces them by links out of the root.
		for _, d := range []string{"d0", "d1"} {
			if err := os.RemoveAll(filepath.Join(root, d)); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Symlink(outside, filepath.Join(root, "d0")); err != nil {
			t.Fatal(err)
		}
		rel, err := filepath.Rel(root, outside)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(rel, filepath.Join(root, "d1")); err != nil {
			t.Fatal(err)
		}
		before := storagetest.DirSnapshot(t, outside)
		s := open(t, opts) // a new process: it never saw d0 or d1 as directories

		for _, p := range []string{"d0/x", "d0/sub/y", "d0/lock", "d0/new", "d0/sub/new/deep", "d1/x", "d1/sub/y"} {
			dir, _, _ := strings.Cut(p, "/")
			if err := s.Delete(ctx, p); err != nil {
				t.Errorf("Delete(%q): %v", p, err)
			}
			wantRefused := func(method string, err error) {
				t.Helper()
				if !errors.Is(err, storage.ErrInvalidPath) || !strings.Contains(err.Error(), dir+" is a symbolic link (never followed)") {
					t.Errorf("%s(%q): got %v, want ErrInvalidPath: %s is a symbolic link (never followed)", method, p, err, dir)
				}
			}
			wantRefused("Put", s.Put(ctx, p, strings.NewReader("pwned"), 5))
			_, err := s.PutIf(ctx, p, []byte("pwned"), "")
			wantRefused("PutIf(create)", err)
			if _, err := s.PutIf(ctx, p, []byte("pwned"), versionOf([]byte("outside x"))); !errors.Is(err, storage.ErrPrecondition) {
				t.Errorf("PutIf(%q, version): got %v, want ErrPrecondition (absent)", p, err)
			}
			wantMissing := func(method string, err error) {
				t.Helper()
				if !errors.Is(err, storage.ErrNotExist) || errors.Is(err, storage.ErrInvalidPath) {
					t.Errorf("%s(%q): got %v, want ErrNotExist", method, p, err)
				}
			}
			_, _, err = s.Get(ctx, p)
			wantMissing("Get", err)
			_, err = s.Stat(ctx, p)
			wantMissing("Stat", err)
			r, err := s.Open(ctx, p)
			if err == nil {
				r.Close()
			}
			wantMissing("Open", err)
		}
		for _, o := range []storage.SweepOptions{
			{},
			{DryRun: true},
			{Dirs: []string{"d0", "d0/sub", "d1", "d1/sub"}},
			{Dirs: []string{"d0", "d0/sub"}, DryRun: true},
		} {
			if found, err := s.SweepTemp(ctx, o); len(found) != 0 || err != nil {
				t.Errorf("SweepTemp(%+v) = %q, %v; want nothing", o, found, err)
			}
		}
		if got := list(t, s, ""); !slices.Equal(got, []string{"file"}) {
			t.Errorf("List = %q", got)
		}
		if after := storagetest.DirSnapshot(t, outside); !maps.Equal(before, after) {
			t.Errorf("the directory outside the root changed:\nbefore %q\n after %q", before, after)
		}
		for _, d := range []string{"d0", "d1"} {
			if fi, err := os.Lstat(filepath.Join(root, d)); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
				t.Errorf("%s is no longer the link: %v, %v", d, fi, err)
			}
		}

		// Below a regular file: missing for readers, left alone by Delete,
		// refused by writers (not as an invalid path).
		if err := s.Delete(ctx, "file/x"); err != nil {
			t.Errorf("Delete(file/x): %v", err)
		}
		if _, _, err := s.Get(ctx, "file/x"); !errors.Is(err, storage.ErrNotExist) {
			t.Errorf("Get(file/x): got %v, want ErrNotExist", err)
		}
		err = s.Put(ctx, "file/x", strings.NewReader("x"), 1)
		if err == nil || errors.Is(err, storage.ErrInvalidPath) || !strings.Contains(err.Error(), "file is not a directory") {
			t.Errorf("Put(file/x): got %v, want file is not a directory", err)
		}
		if found, err := s.SweepTemp(ctx, storage.SweepOptions{Dirs: []string{"file"}}); len(found) != 0 || err != nil {
			t.Errorf("SweepTemp(file) = %q, %v", found, err)
		}
		if data, _, err := s.Get(ctx, "file"); err != nil || string(data) != "inside file" {
			t.Errorf("Get(file) = %q, %v", data, err)
		}
	})
}

// TestExclusiveCreateSurvivesSweep: the lock holder's SweepTemp removes the
// temporary file (and its directories) of a waiter's exclusive create
// between the write and the link; the create starts over and succeeds.
func TestExclusiveCreateSurvivesSweep(t *testing.T) {
	servers(t, func(t *testing.T, opts Options) {
		ctx := t.Context()
		holder, waiter := open(t, opts), open(t, opts)
		put(t, waiter, "locks/dir/warm", "x") // the waiter knows the directories...
		if err := holder.Delete(ctx, "locks/dir/warm"); err != nil {
			t.Fatal(err)
		}
		sweeps := 0
		waiter.beforeLink = func(tmp string) {
			if sweeps == 2 {
				return
			}
			sweeps++
			found, err := holder.SweepTemp(ctx, storage.SweepOptions{})
			if err != nil || !slices.Equal(found, []string{tmp}) {
				t.Errorf("SweepTemp = %q, %v; want %q", found, err, tmp)
			}
			if exists(filepath.Join(opts.Root, "locks")) { // ...that the sweep removes
				t.Error("the sweep left the emptied directory locks")
			}
		}
		v, err := waiter.PutIf(ctx, "locks/dir/lock", []byte("mine"), "")
		if err != nil {
			t.Fatalf("PutIf: %v", err)
		}
		if sweeps != 2 {
			t.Errorf("%d sweeps, want 2", sweeps)
		}
		data, v2, err := holder.Get(ctx, "locks/dir/lock")
		if err != nil || string(data) != "mine" || v2 != v {
			t.Errorf("Get = %q, %q, %v; want %q, %q", data, v2, err, "mine", v)
		}
		if got, want := leftovers(t, opts.Root), []string{"locks", "locks/dir", "locks/dir/lock"}; !slices.Equal(got, want) {
			t.Errorf("on the server: %q, want %q", got, want)
		}
		if _, err := waiter.PutIf(ctx, "locks/dir/lock", []byte("other"), ""); !errors.Is(err, storage.ErrPrecondition) {
			t.Errorf("second PutIf: got %v, want ErrPrecondition", err)
		}
	})
}

// TestExclusiveCreateGivesUpAfterRepeatedSweeps: a temporary file swept
// every time fails the create after createAttempts attempts, with an error
// that is neither a failed condition nor a missing object, and leaves
// nothing behind.
func TestExclusiveCreateGivesUpAfterRepeatedSweeps(t *testing.T) {
	srv := newTestServer(t)
	ctx := t.Context()
	holder, waiter := open(t, srv.options()), open(t, srv.options())
	attempts := 0
	waiter.beforeLink = func(string) {
		attempts++
		if _, err := holder.SweepTemp(ctx, storage.SweepOptions{}); err != nil {
			t.Error(err)
		}
	}
	_, err := waiter.PutIf(ctx, "locks/lock", []byte("mine"), "")
	if err == nil || errors.Is(err, storage.ErrPrecondition) || errors.Is(err, storage.ErrNotExist) || !errors.Is(err, errTempVanished) {
		t.Fatalf("PutIf: got %v, want the vanished temporary file error", err)
	}
	if attempts != createAttempts {
		t.Errorf("%d attempts, want %d", attempts, createAttempts)
	}
	if left := leftovers(t, srv.root); len(left) > 0 {
		t.Errorf("left on the server: %q", left)
	}
}

// TestExclusiveCreateChecksContextBeforeLink: a context cancelled after the
// temporary file is written stops the create before the link.
func TestExclusiveCreateChecksContextBeforeLink(t *testing.T) {
	srv := newTestServer(t)
	s := open(t, srv.options())
	ctx, cancel := context.WithCancel(t.Context())
	s.beforeLink = func(string) { cancel() }
	if _, err := s.PutIf(ctx, "a/lock", []byte("x"), ""); !errors.Is(err, context.Canceled) {
		t.Fatalf("PutIf: got %v, want context.Canceled", err)
	}
	if left := leftovers(t, srv.root); len(left) > 0 {
		t.Errorf("left on the server: %q", left)
	}
}

// TestExclusiveCreateRacesSweep races one SweepTemp of the holder against
// each exclusive create of a waiter, with varying delays: every create
// succeeds (at most one attempt per create can lose its temporary file).
func TestExclusiveCreateRacesSweep(t *testing.T) {
	srv := newTestServer(t)
	ctx := t.Context()
	holder, waiter := open(t, srv.options()), open(t, srv.options())
	var links atomic.Int64
	waiter.beforeLink = func(string) { links.Add(1) }
	const n = 60
	for i := range n {
		var wg sync.WaitGroup
		wg.Go(func() {
			time.Sleep(time.Duration(i%20) * 50 * time.Microsecond)
			if _, err := holder.SweepTemp(ctx, storage.SweepOptions{}); err != nil {
				t.Errorf("SweepTemp: %v", err)
			}
		})
		p := fmt.Sprintf("locks/%d/lock", i)
		_, err := waiter.PutIf(ctx, p, []byte("x"), "")
		wg.Wait()
		if err != nil {
			t.Fatalf("PutIf(%q) of a new name: %v", p, err)
		}
	}
	t.Logf("%d creates, %d started over after a sweep", n, links.Load()-n)
}

// dropReader yields size zero bytes; once it has yielded after bytes it
// calls drop (once) and carries on.
type dropReader struct {
	size, after int
	drop        func()
	done        bool
}

func (r *dropReader) Read(p []byte) (int, error) {
	if r.size == 0 {
		return 0, io.EOF
	}
	if r.after <= 0 && !r.done {
		r.done = true
		r.drop()
	}
	n := min(len(p), r.size)
	clear(p[:n])
	r.size -= n
	r.after -= n
	return n, nil
}

// TestFailedPutRemovesTempFileOnFreshConnection: a Put that fails because
// its connection died removes its temporary file (and the directories it
// made) over a new connection.
func TestFailedPutRemovesTempFileOnFreshConnection(t *testing.T) {
	for _, tc := range []struct {
		name string
		drop func(srv *testServer, c *conn)
	}{
		{"client closes", func(_ *testServer, c *conn) { c.close() }},
		{"server drops, noticed", func(srv *testServer, c *conn) {
			srv.dropConnections()
			for deadline := time.Now().Add(5 * time.Second); !c.dead.Load() && time.Now().Before(deadline); {
				time.Sleep(time.Millisecond)
			}
		}},
		{"server drops", func(srv *testServer, _ *conn) { srv.dropConnections() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newTestServer(t)
			s := open(t, srv.options())
			put(t, s, "keep", "keep")
			s.mu.Lock()
			c := s.conn
			s.mu.Unlock()
			r := &dropReader{size: 8 << 20, after: 1 << 20, drop: func() { tc.drop(srv, c) }}
			if err := s.Put(t.Context(), "new/dir/big", r, 8<<20); err == nil {
				t.Fatal("Put over a dead connection succeeded")
			}
			if !r.done {
				t.Fatal("the connection was not dropped")
			}
			if left := leftovers(t, srv.root); !slices.Equal(left, []string{"keep"}) {
				t.Errorf("left on the server: %q, want only keep", left)
			}
			put(t, s, "new/dir/after", "x")
		})
	}
}
